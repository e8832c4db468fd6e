#include "pricing/RoadTripEstimator.h"

#include "city/City.h"

namespace taxicore {

TripEstimate RoadTripEstimator::estimate(LatLng from, LatLng to) const
{
    const city::Route route = m_city.route(city::GeoPoint{from.lat, from.lng}, city::GeoPoint{to.lat, to.lng});
    if (!route.found)
        return m_fallback.estimate(from, to);
    return {route.distanceM, route.durationS};
}

} // namespace taxicore

namespace taxicore {

std::vector<double> RoadTripEstimator::etasTo(LatLng target, const std::vector<LatLng> &sources) const
{
    std::vector<city::RoadPoint> snapped;
    snapped.reserve(sources.size());
    for (const LatLng &source : sources)
        snapped.push_back(m_city.snap({source.lat, source.lng}));
    return m_city.etaTo(m_city.snap({target.lat, target.lng}), snapped, kMaxEtaS);
}

} // namespace taxicore
