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

TripEstimate StraightLineEstimator::estimate(LatLng from, LatLng to) const
{
    TripEstimate e;
    e.distanceM = city::haversineMeters(from, to) * kDetourFactor;
    e.durationS = e.distanceM / (kAverageSpeedKmh / 3.6);
    return e;
}

} // namespace taxicore
