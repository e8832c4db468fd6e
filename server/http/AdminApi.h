#pragma once

namespace taxicore {

class FleetStore;
class Router;

// Operator endpoints (/admin/v1/...): runtime settings, workers, events. Only from loopback.
// They work from any process: state is read from the shared region and changes go to the
// primary through the runtime mailbox.
void registerAdminRoutes(Router &router, FleetStore &fleet);

} // namespace taxicore
