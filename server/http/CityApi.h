#pragma once

namespace taxicore::city {
class City;
}

namespace taxicore {

class RouteTable;
class TripEstimator;

// Street-network endpoints: /api/v1/route (fastest route by road) and /api/v1/map (the streets
// for the rider page, gzip when accepted, with an ETag).
void registerCityRoutes(RouteTable &router, const city::City &city);

} // namespace taxicore
