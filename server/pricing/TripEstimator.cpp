#include "pricing/TripEstimator.h"

#include "geo/GeoMath.h"

namespace taxicore {

TripEstimate StraightLineEstimator::estimate(LatLng from, LatLng to) const
{
    TripEstimate e;
    e.distanceM = geo::distanceM(from, to) * kDetourFactor;
    e.durationS = e.distanceM / (kAverageSpeedKmh / 3.6);
    return e;
}

} // namespace taxicore
