#include "city/SpatialGridBuilder.h"

#include "city/Geo.h"

#include <algorithm>
#include <cmath>

namespace taxicore::city {

namespace {
uint32_t cellsAlong(int64_t span, int32_t cellSize)
{
    return uint32_t(std::max<int64_t>(1, span / cellSize + 1));
}
} // namespace

SpatialGrid buildSpatialGrid(const RoadGraph &graph, format::Coord boundsMin, format::Coord boundsMax)
{
    SpatialGrid grid;
    grid.origin = boundsMin;
    const double centreLat = fromCoordUnits(boundsMin.lat / 2 + boundsMax.lat / 2);
    const LocalProjection projection({centreLat, 0});
    grid.cellSize.lat = std::max(1, toCoordUnits(kGridCellMeters / kMetersPerDegreeLat));
    grid.cellSize.lng = std::max(1, toCoordUnits(kGridCellMeters / projection.metersPerDegreeLng));
    grid.rows = cellsAlong(int64_t(boundsMax.lat) - boundsMin.lat, grid.cellSize.lat);
    grid.columns = cellsAlong(int64_t(boundsMax.lng) - boundsMin.lng, grid.cellSize.lng);

    auto row = [&](int32_t lat) {
        return std::min<uint32_t>(grid.rows - 1, uint32_t((int64_t(lat) - grid.origin.lat) / grid.cellSize.lat));
    };
    auto column = [&](int32_t lng) {
        return std::min<uint32_t>(grid.columns - 1, uint32_t((int64_t(lng) - grid.origin.lng) / grid.cellSize.lng));
    };
    std::vector<std::vector<format::GridItem>> cells(size_t(grid.rows) * grid.columns);
    for (uint32_t s = 0; s < graph.segments.size(); ++s) {
        const std::vector<format::Coord> &shape = graph.segments[s].shape;
        for (uint32_t piece = 0; piece + 1 < shape.size(); ++piece) {
            const format::Coord a = shape[piece];
            const format::Coord b = shape[piece + 1];
            for (uint32_t r = row(std::min(a.lat, b.lat)); r <= row(std::max(a.lat, b.lat)); ++r)
                for (uint32_t c = column(std::min(a.lng, b.lng)); c <= column(std::max(a.lng, b.lng)); ++c)
                    cells[size_t(r) * grid.columns + c].push_back({s, piece});
        }
    }
    grid.cellFirst.assign(1, 0);
    for (const std::vector<format::GridItem> &cell : cells) {
        grid.items.insert(grid.items.end(), cell.begin(), cell.end());
        grid.cellFirst.push_back(uint32_t(grid.items.size()));
    }
    return grid;
}

} // namespace taxicore::city
