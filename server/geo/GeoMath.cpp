#include "geo/GeoMath.h"

#include "Geo.h"

#include <cmath>
#include <numbers>

namespace taxicore::geo {

namespace {
constexpr double kRad = std::numbers::pi / 180.0;
}

double distanceM(LatLng a, LatLng b)
{
    return city::haversineMeters({a.lat, a.lng}, {b.lat, b.lng});
}

double bearingDeg(LatLng a, LatLng b)
{
    const double y = std::sin((b.lng - a.lng) * kRad) * std::cos(b.lat * kRad);
    const double x = std::cos(a.lat * kRad) * std::sin(b.lat * kRad)
        - std::sin(a.lat * kRad) * std::cos(b.lat * kRad) * std::cos((b.lng - a.lng) * kRad);
    const double deg = std::atan2(y, x) / kRad;
    return deg < 0 ? deg + 360 : deg;
}

LatLng moveTowards(LatLng from, LatLng to, double metres)
{
    const double total = distanceM(from, to);
    if (total <= metres || total <= 0)
        return to;
    // Over city distances a linear step in degrees is accurate to well under a metre.
    const double f = metres / total;
    return {from.lat + (to.lat - from.lat) * f, from.lng + (to.lng - from.lng) * f};
}

bool isValidCoordinate(double lat, double lng)
{
    return std::isfinite(lat) && std::isfinite(lng) && lat >= -90 && lat <= 90 && lng >= -180
        && lng <= 180;
}

} // namespace taxicore::geo
