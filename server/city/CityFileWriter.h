#pragma once
// Serialises an imported road graph and its contraction hierarchy into a city file.

#include "city/ContractionHierarchyBuilder.h"
#include "city/RoadGraph.h"

#include <QByteArray>
#include <QString>

namespace taxicore::city {

QByteArray serializeCity(const RoadGraph &graph, const ContractionHierarchy &hierarchy);

// Writes atomically (temporary file, then rename). Returns an error message, empty on success.
QString writeCityFile(const QString &path, const QByteArray &bytes);

} // namespace taxicore::city
