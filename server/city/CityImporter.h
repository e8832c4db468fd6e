#pragma once
// The import pipeline behind taxicore-import-city: read ways (GeoJSON, .osm, .osm.pbf by file
// name), build the road graph and its contraction hierarchy, write the city file.

#include "city/RoadGraph.h"

#include <QString>

namespace taxicore::city {

struct ImportReport {
    RoadGraphStats graph;
    size_t nodes = 0;
    size_t segments = 0;
    size_t shortcuts = 0;
    size_t fileBytes = 0;
    double readSeconds = 0;
    double buildSeconds = 0;
    double hierarchySeconds = 0;
};

// Returns an error message naming the file and the problem; empty on success.
QString importCity(const QString &inputPath, const QString &outputPath, ImportReport *report = nullptr);

} // namespace taxicore::city
