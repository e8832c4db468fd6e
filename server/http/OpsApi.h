#pragma once

#include <QByteArray>
#include <functional>

namespace taxicore {

class FleetStore;
class RouteTable;

// Operations endpoints: /healthz, /metrics (Prometheus) and /api/v1/openapi.json.
// `mode` reports the execution model serving now.
void registerOpsRoutes(RouteTable &router, const FleetStore &fleet, std::function<QByteArray()> mode);

} // namespace taxicore
