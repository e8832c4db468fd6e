#pragma once
// Buckets every straight piece of every road shape into a uniform lat/lng grid, so that
// snapping a coordinate only looks at the few cells around it.

#include "city/CityFormat.h"
#include "city/RoadGraph.h"

#include <vector>

namespace taxicore::city {

inline constexpr double kGridCellMeters = 125;

struct SpatialGrid {
    format::Coord origin{};   // south-west corner
    format::Coord cellSize{}; // 1e-7 degree units
    uint32_t rows = 0;
    uint32_t columns = 0;
    std::vector<uint32_t> cellFirst; // rows * columns + 1
    std::vector<format::GridItem> items;
};

SpatialGrid buildSpatialGrid(const RoadGraph &graph, format::Coord boundsMin, format::Coord boundsMax);

} // namespace taxicore::city
