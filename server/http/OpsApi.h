#pragma once

#include <QByteArray>
#include <functional>

namespace taxicore {

class FleetStore;
class Ledger;
class RouteTable;

// Operations endpoints: /healthz, /metrics (Prometheus) and /api/v1/openapi.json.
// `mode` reports the execution model serving now. /healthz says "degraded" while this process's
// `ledger` (none: no ledger) fails its commits: bookings are refused then, reads are served.
void registerOpsRoutes(RouteTable &router, const FleetStore &fleet, const Ledger *ledger,
                       std::function<QByteArray()> mode);

} // namespace taxicore
