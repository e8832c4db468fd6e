#include "city/Geo.h"

#include <cmath>
#include <numbers>

namespace taxicore::city {

namespace {
double radians(double degrees)
{
    return degrees * std::numbers::pi / 180.0;
}
} // namespace

double haversineMeters(GeoPoint a, GeoPoint b)
{
    const double dLat = radians(b.lat - a.lat);
    const double dLng = radians(b.lng - a.lng);
    const double h = std::sin(dLat / 2) * std::sin(dLat / 2)
                     + std::cos(radians(a.lat)) * std::cos(radians(b.lat)) * std::sin(dLng / 2) * std::sin(dLng / 2);
    return 2 * kEarthRadiusMeters * std::asin(std::min(1.0, std::sqrt(h)));
}

double bearingDeg(GeoPoint a, GeoPoint b)
{
    const double y = std::sin(radians(b.lng - a.lng)) * std::cos(radians(b.lat));
    const double x = std::cos(radians(a.lat)) * std::sin(radians(b.lat))
                     - std::sin(radians(a.lat)) * std::cos(radians(b.lat)) * std::cos(radians(b.lng - a.lng));
    const double deg = std::atan2(y, x) * 180.0 / std::numbers::pi;
    return deg < 0 ? deg + 360 : deg;
}

GeoPoint moveTowards(GeoPoint from, GeoPoint to, double metres)
{
    const double total = haversineMeters(from, to);
    if (total <= metres || total <= 0)
        return to;
    // Over city distances a linear step in degrees is accurate to well under a metre.
    const double f = metres / total;
    return {from.lat + (to.lat - from.lat) * f, from.lng + (to.lng - from.lng) * f};
}

bool isValidCoordinate(double lat, double lng)
{
    return std::isfinite(lat) && std::isfinite(lng) && lat >= -90 && lat <= 90 && lng >= -180 && lng <= 180;
}

LocalProjection::LocalProjection(GeoPoint originPoint)
    : origin(originPoint)
    , metersPerDegreeLng(kMetersPerDegreeLat * std::cos(radians(originPoint.lat)))
{
}

} // namespace taxicore::city
