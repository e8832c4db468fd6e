#pragma once
// One-to-many travel times towards one target (e.g. every candidate car for a pickup), on the
// contraction hierarchy: one reverse search from the target over the downward arcs labels the
// target's whole reverse search space once; then each source needs only a small upward search
// that meets those labels (the "bucket" many-to-one technique, Knopp et al. 2007). For many
// sources (a whole fleet) one plain reverse Dijkstra over the road arcs, bounded by the time
// limit, is cheaper than a search per source, and is used instead.

#include "city/CityData.h"
#include "city/CityTypes.h"

#include <span>
#include <vector>

namespace taxicore::city {

// Above this many sources etaTo switches from per-source upward searches (~5 us each on the
// bundled city) to one reverse Dijkstra over the whole graph (~1-2 ms).
inline constexpr size_t kBucketSearchMaxSources = 300;

class EtaSearch {
public:
    explicit EtaSearch(const CityData &data)
        : m_data(data)
    {
    }

    // Seconds from each source to the target by road; kUnreachable beyond maxSeconds.
    std::vector<double> etaTo(const RoadPoint &target, std::span<const RoadPoint> sources, double maxSeconds) const;

private:
    std::vector<double> byHierarchy(const RoadPoint &target, std::span<const RoadPoint> sources, double limitMs) const;
    std::vector<double> byReverseDijkstra(const RoadPoint &target, std::span<const RoadPoint> sources,
                                          double limitMs) const;

    const CityData &m_data;
};

} // namespace taxicore::city
