#pragma once

namespace taxicore {

class FleetStore;
class RouteTable;

// Surge for riders and the console: GET /api/v1/surge (the whole grid) and
// GET /api/v1/surge?lat=&lng= (one zone). Read from the shared region, so every process answers
// the same.
void registerSurgeRoutes(RouteTable &router, FleetStore &fleet);

// Operator endpoints for pricing and demand (loopback or admin token, like every /admin/*):
// GET/PUT /admin/v1/tariff and GET/PUT /admin/v1/demand. A PUT changes the shared region, so it
// takes effect in every process at once.
void registerPricingAdminRoutes(RouteTable &router, FleetStore &fleet);

} // namespace taxicore
