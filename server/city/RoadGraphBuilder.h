#pragma once
// Turns raw OSM ways into the routable graph: keeps drivable ways, splits them at shared nodes
// (intersections) into segments, applies one-way and speed rules, and keeps only the largest
// strongly connected component so that every snapped point can reach every other.

#include "city/RawWay.h"
#include "city/RoadGraph.h"

namespace taxicore::city {

RoadGraph buildRoadGraph(const std::vector<RawWay> &ways, RoadGraphStats *stats = nullptr);

// Travel time in ms for a length at a speed, at least 1 ms so that every arc costs something.
uint32_t travelTimeMs(double lengthM, double speedKmh);

} // namespace taxicore::city
