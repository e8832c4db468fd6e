#pragma once

#include "fleet/FleetTypes.h"

namespace taxicore::geo {

// Great-circle distance in metres (the city library's haversine).
double distanceM(LatLng a, LatLng b);
// Initial bearing from a to b, degrees clockwise from north in [0, 360).
double bearingDeg(LatLng a, LatLng b);
// The point `metres` from `from` towards `to` (clamped at `to`).
LatLng moveTowards(LatLng from, LatLng to, double metres);
bool isValidCoordinate(double lat, double lng);

} // namespace taxicore::geo
