#pragma once
// One-to-many travel times towards one target (e.g. every candidate car for a pickup), on the
// contraction hierarchy: one reverse search from the target over the downward arcs labels the
// target's whole reverse search space once; then each source needs only a small upward search
// that meets those labels (the "bucket" many-to-one technique, Knopp et al. 2007).

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
