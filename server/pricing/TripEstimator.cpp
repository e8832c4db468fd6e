#include "pricing/TripEstimator.h"

#include "city/Geo.h"

namespace taxicore {

std::vector<double> TripEstimator::etasTo(LatLng target, const std::vector<LatLng> &sources) const
{
    std::vector<double> etas;
    etas.reserve(sources.size());
    for (const LatLng &source : sources)
        etas.push_back(estimate(source, target).durationS);
    return etas;
}

std::vector<double> TripEstimator::carEtasTo(LatLng target, const std::vector<NearbyCar> &cars) const
{
    std::vector<LatLng> positions;
    positions.reserve(cars.size());
    for (const NearbyCar &n : cars)
        positions.push_back(n.car.position);
    return etasTo(target, positions);
}

TripEstimate StraightLineEstimator::estimate(LatLng from, LatLng to) const
{
    TripEstimate e;
    e.distanceM = city::haversineMeters(from, to) * kDetourFactor;
    e.durationS = e.distanceM / (kAverageSpeedKmh / 3.6);
    return e;
}

} // namespace taxicore
