#pragma once

#include "pricing/TripEstimator.h"

namespace taxicore::city {
class City;
}

namespace taxicore {

// Distance and duration by road: the fastest route on the loaded city's street graph.
// Falls back to the straight-line estimate when two points are not connected by road.
class RoadTripEstimator final : public TripEstimator {
public:
    explicit RoadTripEstimator(const city::City &city)
        : m_city(city)
    {
    }
    TripEstimate estimate(LatLng from, LatLng to) const override;
    std::vector<double> etasTo(LatLng target, const std::vector<LatLng> &sources) const override;
    std::vector<double> carEtasTo(LatLng target, const std::vector<NearbyCar> &cars) const override;

    // Cars further than this by road are not offered.
    static constexpr double kMaxEtaS = 3600;

private:
    const city::City &m_city;
    StraightLineEstimator m_fallback;
};

} // namespace taxicore
