#pragma once
// Cars on a line north of one point, 100 m apart, and an ETA by straight-line distance: the
// nearest free car is the one a booking at the point gets (the cluster tests' fleet copies).
#include "fleet/FleetTypes.h"

#include <cmath>
#include <vector>

namespace taxicore::test {

inline constexpr LatLng kCentre{57.7000, 11.9700};
inline constexpr double kMetreLat = 1.0 / 111'195.0;

inline LatLng placeNorth(int id)
{
    return {kCentre.lat + id * 100 * kMetreLat, kCentre.lng};
}

// Seconds by straight-line distance at 10 m/s.
inline std::vector<double> etaByDistance(LatLng pickup, const std::vector<LatLng> &cars)
{
    std::vector<double> out;
    for (const LatLng &car : cars)
        out.push_back(std::abs(car.lat - pickup.lat) / kMetreLat / 10.0);
    return out;
}

} // namespace taxicore::test
