#pragma once

#include <QByteArray>
#include <QList>

namespace taxicore {

class FleetStore;

// Renders the Prometheus text exposition format, summed over every worker slot:
// requests by route and status, the latency histogram, open connections, in-flight, mode.
QByteArray renderPrometheus(const FleetStore &fleet, const QList<QByteArray> &routeNames, const QByteArray &mode);

// Requests served by every process of this run.
quint64 totalRequests(const FleetStore &fleet);

} // namespace taxicore
