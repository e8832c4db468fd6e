#include "city/CityImporter.h"

#include "city/CityFileWriter.h"
#include "city/ContractionHierarchyBuilder.h"
#include "city/Geo.h"
#include "city/GeoJsonImporter.h"
#include "city/OsmImporter.h"
#include "city/RoadGraphBuilder.h"

#include <QElapsedTimer>
#include <algorithm>

namespace taxicore::city {

namespace {
// A city file's spatial grid has a cell per 125 m of its bounding box, so roads far apart make it
// huge: one stray point 57 degrees away took 37 s and 550 MB (found by fuzz_city_geojson).
// A city fits in 1 degree (about 110 km north-south) each way.
constexpr double kMaxSpanDegrees = 1.0;

double spanDegrees(const RoadGraph &graph)
{
    double south = 90, north = -90, west = 180, east = -180;
    for (const RoadSegment &segment : graph.segments)
        for (const format::Coord c : segment.shape) {
            south = std::min(south, fromCoordUnits(c.lat));
            north = std::max(north, fromCoordUnits(c.lat));
            west = std::min(west, fromCoordUnits(c.lng));
            east = std::max(east, fromCoordUnits(c.lng));
        }
    return std::max(north - south, east - west);
}

bool isOsmFile(const QString &path)
{
    return path.endsWith(QLatin1String(".osm"), Qt::CaseInsensitive)
           || path.endsWith(QLatin1String(".osm.pbf"), Qt::CaseInsensitive)
           || path.endsWith(QLatin1String(".pbf"), Qt::CaseInsensitive);
}
} // namespace

QString importCity(const QString &inputPath, const QString &outputPath, ImportReport *report)
{
    ImportReport local;
    ImportReport &out = report ? *report : local;
    QElapsedTimer timer;
    timer.start();
    const WayReadResult read = isOsmFile(inputPath) ? readOsmWays(inputPath) : readGeoJsonWays(inputPath);
    if (!read.error.isEmpty())
        return read.error;
    out.readSeconds = timer.nsecsElapsed() / 1e9;

    timer.restart();
    const RoadGraph graph = buildRoadGraph(read.ways, &out.graph);
    if (graph.segments.empty())
        return QStringLiteral("%1: no drivable roads found").arg(inputPath);
    if (const double span = spanDegrees(graph); span > kMaxSpanDegrees)
        return QStringLiteral("%1: the roads span %2 degrees; a city may span at most %3")
            .arg(inputPath)
            .arg(span, 0, 'f', 1)
            .arg(kMaxSpanDegrees);
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
