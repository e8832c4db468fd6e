#include "Geo.h"

#include <cmath>
#include <numbers>

namespace taxicore::city {

namespace {
double radians(double degrees) {
    return degrees * std::numbers::pi / 180.0;
}
} // namespace

double haversineMeters(GeoPoint a, GeoPoint b) {
    const double dLat = radians(b.lat - a.lat);
    const double dLng = radians(b.lng - a.lng);
    const double h = std::sin(dLat / 2) * std::sin(dLat / 2) +
                     std::cos(radians(a.lat)) * std::cos(radians(b.lat)) * std::sin(dLng / 2) *
                         std::sin(dLng / 2);
    return 2 * kEarthRadiusMeters * std::asin(std::min(1.0, std::sqrt(h)));
}

LocalProjection::LocalProjection(GeoPoint originPoint)
    : origin(originPoint)
    , metersPerDegreeLng(kMetersPerDegreeLat * std::cos(radians(originPoint.lat))) {}

} // namespace taxicore::city
