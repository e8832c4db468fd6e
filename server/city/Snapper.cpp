#include "city/Snapper.h"

#include <algorithm>
#include <cmath>

namespace taxicore::city {

namespace {
// Taken off the distance to the visited cells' sides against rounding in the projection.
constexpr double kReachRoundingM = 1e-6;

struct Candidate {
    double distanceSquared = INFINITY;
    uint32_t segment = 0;
    uint32_t piece = 0;
    double t = 0; // position along the piece, 0..1
};

GeoPoint centreOf(const format::Header &h)
{
    return {(fromCoordUnits(h.boundsMin.lat) + fromCoordUnits(h.boundsMax.lat)) / 2,
            (fromCoordUnits(h.boundsMin.lng) + fromCoordUnits(h.boundsMax.lng)) / 2};
}

int64_t cellIndex(double degrees, int32_t origin, int32_t cellSize)
{
    return int64_t(std::floor((degrees * kCoordUnitsPerDegree - origin) / cellSize));
}
} // namespace

Snapper::Snapper(const CityData &data)
    : m_data(data)
    , m_projection(centreOf(*data.header))
{
    const format::Header &h = *data.header;
    m_cellMeters = std::min(h.gridCellSize.lat / kCoordUnitsPerDegree * kMetersPerDegreeLat,
                            h.gridCellSize.lng / kCoordUnitsPerDegree * m_projection.metersPerDegreeLng);
}

RoadPoint Snapper::snap(GeoPoint query) const
{
    // Coordinates come from clients: refuse NaN, clamp the rest onto the globe.
    if (!std::isfinite(query.lat) || !std::isfinite(query.lng))
        return {};
    const GeoPoint point{std::clamp(query.lat, -90.0, 90.0), std::clamp(query.lng, -180.0, 180.0)};
    const format::Header &h = *m_data.header;
    const int64_t rows = h.gridRows;
    const int64_t columns = h.gridColumns;
    const int64_t rawRow = cellIndex(point.lat, h.gridOrigin.lat, h.gridCellSize.lat);
    const int64_t rawColumn = cellIndex(point.lng, h.gridOrigin.lng, h.gridCellSize.lng);
    const int64_t row0 = std::clamp<int64_t>(rawRow, 0, rows - 1);
    const int64_t column0 = std::clamp<int64_t>(rawColumn, 0, columns - 1);
    // Outside the grid, cells k rings from the clamped cell may be only k - 1 cells away.
    const int64_t slack = (row0 != rawRow || column0 != rawColumn) ? 1 : 0;
    const double px = m_projection.x(point.lng);
    const double py = m_projection.y(point.lat);

    Candidate best;
    auto visitCell = [&](int64_t r, int64_t c) {
        const uint64_t cell = uint64_t(r * columns + c);
        for (uint32_t i = m_data.gridCellFirst[cell]; i < m_data.gridCellFirst[cell + 1]; ++i) {
            const format::GridItem item = m_data.gridItems[i];
            const format::Coord *shape = &m_data.shapePoints[m_data.shapeFirst[item.segment]];
            const double ax = m_projection.x(fromCoordUnits(shape[item.piece].lng));
            const double ay = m_projection.y(fromCoordUnits(shape[item.piece].lat));
            const double dx = m_projection.x(fromCoordUnits(shape[item.piece + 1].lng)) - ax;
            const double dy = m_projection.y(fromCoordUnits(shape[item.piece + 1].lat)) - ay;
            const double lengthSquared = dx * dx + dy * dy;
            const double t =
                lengthSquared > 0 ? std::clamp(((px - ax) * dx + (py - ay) * dy) / lengthSquared, 0.0, 1.0) : 0.0;
            const double ex = ax + t * dx - px;
            const double ey = ay + t * dy - py;
            const double distanceSquared = ex * ex + ey * ey;
            if (distanceSquared < best.distanceSquared)
                best = {distanceSquared, item.segment, item.piece, t};
        }
    };
    // No piece outside the square of cells visited so far can be nearer than the square's nearest
    // open side (a side on the grid's edge has nothing beyond it). Most points snapped are cars on
    // a road, whose piece lies in their own cell: measuring to the cell's sides instead of a whole
    // cell's width ends the search after ring 0 instead of ring 1 (9 cells), most of a snap's cost.
    const auto edgeY = [&](int64_t row) {
        return m_projection.y((h.gridOrigin.lat + double(row) * h.gridCellSize.lat) / kCoordUnitsPerDegree);
    };
    const auto edgeX = [&](int64_t column) {
        return m_projection.x((h.gridOrigin.lng + double(column) * h.gridCellSize.lng) / kCoordUnitsPerDegree);
    };
    const auto reachAfter = [&](int64_t ring) {
        if (slack != 0) // outside the grid: the clamped cell is not the point's own
            return double(ring - slack) * m_cellMeters;
        double reach = INFINITY;
        if (row0 - ring > 0)
            reach = std::min(reach, py - edgeY(row0 - ring));
        if (row0 + ring < rows - 1)
            reach = std::min(reach, edgeY(row0 + ring + 1) - py);
        if (column0 - ring > 0)
            reach = std::min(reach, px - edgeX(column0 - ring));
        if (column0 + ring < columns - 1)
            reach = std::min(reach, edgeX(column0 + ring + 1) - px);
        return reach - kReachRoundingM;
    };
    const int64_t maxRing = std::max({row0, rows - 1 - row0, column0, columns - 1 - column0});
    for (int64_t ring = 0; ring <= maxRing; ++ring) {
        for (int64_t r = std::max<int64_t>(0, row0 - ring); r <= std::min(rows - 1, row0 + ring); ++r) {
            const bool edgeRow = r == row0 - ring || r == row0 + ring;
            if (edgeRow) {
                for (int64_t c = std::max<int64_t>(0, column0 - ring); c <= std::min(columns - 1, column0 + ring); ++c)
                    visitCell(r, c);
            } else {
                if (column0 - ring >= 0)
                    visitCell(r, column0 - ring);
                if (ring > 0 && column0 + ring < columns)
                    visitCell(r, column0 + ring);
            }
        }
        const double reach = reachAfter(ring);
        if (best.distanceSquared < INFINITY && reach > 0 && best.distanceSquared <= reach * reach)
            break;
    }
    if (!(best.distanceSquared < INFINITY))
        return {};

    const std::span<const format::Coord> shape = m_data.shape(best.segment);
    double offset = 0;
    for (uint32_t i = 0; i < best.piece; ++i)
        offset += haversineMeters(CityData::geo(shape[i]), CityData::geo(shape[i + 1]));
    const GeoPoint a = CityData::geo(shape[best.piece]);
    const GeoPoint b = CityData::geo(shape[best.piece + 1]);
    offset += best.t * haversineMeters(a, b);

    RoadPoint result;
    result.valid = true;
    result.point = {a.lat + best.t * (b.lat - a.lat), a.lng + best.t * (b.lng - a.lng)};
    result.segment = best.segment;
    result.piece = best.piece;
    result.offsetM = std::min<double>(offset, m_data.segments[best.segment].lengthM);
    result.distanceM = std::sqrt(best.distanceSquared);
    return result;
}

RoadPoint Snapper::pointAlong(uint32_t segment, double offsetM) const
{
    const std::span<const format::Coord> shape = m_data.shape(segment);
    const double target = std::clamp(offsetM, 0.0, double(m_data.segments[segment].lengthM));
    double walked = 0;
    for (uint32_t piece = 0; piece + 1 < shape.size(); ++piece) {
        const GeoPoint a = CityData::geo(shape[piece]);
        const GeoPoint b = CityData::geo(shape[piece + 1]);
        const double length = haversineMeters(a, b);
        if (walked + length >= target || piece + 2 == shape.size()) {
            const double t = length > 0 ? std::clamp((target - walked) / length, 0.0, 1.0) : 0.0;
            return {true, {a.lat + t * (b.lat - a.lat), a.lng + t * (b.lng - a.lng)}, segment, piece, target, 0};
        }
        walked += length;
    }
    return {};
}

} // namespace taxicore::city
