#pragma once

#include <QJsonObject>
#include <functional>

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

// What GET /admin/v1/cluster answers for the server whose fleet is `fleet`: {"cluster", "nodes"}
// (runtime/ServerHost sets it from cluster/NodeDirectory, a worker process from its own). Keyed by
// fleet because a process may host several servers (tests, the console). An empty view removes it.
using ClusterView = std::function<QJsonObject()>;
void setClusterView(const FleetStore &fleet, ClusterView view);

} // namespace taxicore
