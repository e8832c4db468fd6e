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

std::vector<double> RoadTripEstimator::carEtasTo(LatLng target, const std::vector<NearbyCar> &cars) const
{
    const std::size_t segments = m_city.data().segments.size();
    std::vector<city::RoadPoint> located;
    located.reserve(cars.size());
    for (const NearbyCar &n : cars) {
        const RoadPlace &road = n.car.road;
        if (!road.located || road.segment >= segments) {
            located.push_back(m_city.snap({n.car.position.lat, n.car.position.lng}));
            continue;
        }
        // The ETA search starts from the segment and offset alone; the rest of a snap is not needed.
        city::RoadPoint point;
        point.valid = true;
        point.segment = road.segment;
        point.offsetM = road.offsetM;
        located.push_back(point);
    }
    return m_city.etaTo(m_city.snap({target.lat, target.lng}), located, kMaxEtaS);
}

} // namespace taxicore
