#pragma once
// One-to-many travel times towards one target: a single Dijkstra over the reversed road graph
// from the target settles every source (e.g. every candidate car for a pickup) at once, and stops
// when all are settled or the time limit is passed.

#include "CityData.h"
#include "CityTypes.h"

#include <span>
#include <vector>

namespace taxicore::city {

class EtaSearch {
public:
    explicit EtaSearch(const CityData &data) : m_data(data) {}

    // Seconds from each source to the target by road; kUnreachable beyond maxSeconds.
    std::vector<double> etaTo(const RoadPoint &target, std::span<const RoadPoint> sources, double maxSeconds) const;

private:
    const CityData &m_data;
};

}  // namespace taxicore::city
