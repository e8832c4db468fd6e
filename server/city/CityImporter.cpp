#include "CityImporter.h"

#include "CityFileWriter.h"
#include "ContractionHierarchyBuilder.h"
#include "GeoJsonImporter.h"
#include "OsmImporter.h"
#include "RoadGraphBuilder.h"

#include <QElapsedTimer>

namespace taxicore::city {

namespace {
bool isOsmFile(const QString &path) {
    return path.endsWith(QLatin1String(".osm"), Qt::CaseInsensitive) ||
           path.endsWith(QLatin1String(".osm.pbf"), Qt::CaseInsensitive) ||
           path.endsWith(QLatin1String(".pbf"), Qt::CaseInsensitive);
}
} // namespace

QString importCity(const QString &inputPath, const QString &outputPath, ImportReport *report) {
    ImportReport local;
    ImportReport &out = report ? *report : local;
    QElapsedTimer timer;
    timer.start();
    const WayReadResult read =
        isOsmFile(inputPath) ? readOsmWays(inputPath) : readGeoJsonWays(inputPath);
    if (!read.error.isEmpty())
        return read.error;
    out.readSeconds = timer.nsecsElapsed() / 1e9;

    timer.restart();
    const RoadGraph graph = buildRoadGraph(read.ways, &out.graph);
    if (graph.segments.empty())
        return QStringLiteral("%1: no drivable roads found").arg(inputPath);
    out.buildSeconds = timer.nsecsElapsed() / 1e9;

    timer.restart();
    const ContractionHierarchy hierarchy = buildContractionHierarchy(graph);
    out.hierarchySeconds = timer.nsecsElapsed() / 1e9;

    const QByteArray bytes = serializeCity(graph, hierarchy);
    out.nodes = graph.nodes.size();
    out.segments = graph.segments.size();
    out.shortcuts = hierarchy.shortcutCount;
    out.fileBytes = size_t(bytes.size());
    return writeCityFile(outputPath, bytes);
}

} // namespace taxicore::city
