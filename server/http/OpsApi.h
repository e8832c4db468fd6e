#pragma once

#include <QByteArray>
#include <functional>

namespace taxicore {

class FleetStore;
class Ledger;
class RouteTable;

// Operations endpoints: /healthz, /metrics (Prometheus) and /api/v1/openapi.json.
// `mode` reports the execution model serving now. /healthz says "degraded" while this process's
// `ledger` (none: no ledger) or another serving process's fails its commits: bookings are refused
// then, reads are served.
// `slot`: this process's worker slot (its ledger is read fresh, the others as published).
void registerOpsRoutes(RouteTable &router, const FleetStore &fleet, const Ledger *ledger, int slot,
                       std::function<QByteArray()> mode);

} // namespace taxicore
