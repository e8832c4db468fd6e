#pragma once

#include "fleet/FleetTypes.h"

#include <vector>

namespace taxicore {

struct TripEstimate {
    double distanceM = 0;
    double durationS = 0;
};

// How far and how long a drive from one point to another is. Straight-line with a detour factor
// until a road network is loaded; the city's router answers by road.
class TripEstimator {
public:
    virtual ~TripEstimator() = default;
    virtual TripEstimate estimate(LatLng from, LatLng to) const = 0;
    // Seconds from each source to one target (infinity when it cannot get there); by road this
    // is one reverse search, not one route per source.
    virtual std::vector<double> etasTo(LatLng target, const std::vector<LatLng> &sources) const;
    // The same from each car's position; by road from where the fleet located it
    // (CarSnapshot::road), so no car is snapped again (nearby's ETAs, docs/benchmarks.md §13).
    virtual std::vector<double> carEtasTo(LatLng target, const std::vector<NearbyCar> &cars) const;
};

class StraightLineEstimator final : public TripEstimator {
public:
    // Streets are ~30 % longer than the crow flies in a city centre; 30 km/h average speed.
    static constexpr double kDetourFactor = 1.3;
    static constexpr double kAverageSpeedKmh = 30.0;
    TripEstimate estimate(LatLng from, LatLng to) const override;
};

} // namespace taxicore
