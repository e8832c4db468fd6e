#pragma once

namespace taxicore {

class FleetStore;
class Ledger;
class RouteTable;
class TripEstimator;

// Operator endpoints (/admin/v1/...): runtime settings, workers, events, reassigning a booking.
// Only from loopback. They work from any process: state is read from the shared region and
// changes go to the primary through the runtime mailbox. A reassign is answered once `ledger`
// (may be null) committed it; `estimator` ranks cars by road.
void registerAdminRoutes(RouteTable &router, FleetStore &fleet, const TripEstimator &estimator, Ledger *ledger);

} // namespace taxicore
