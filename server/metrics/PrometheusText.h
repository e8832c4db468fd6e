#pragma once

#include <QByteArray>
#include <QList>

namespace taxicore {

class FleetStore;

// Renders the Prometheus text exposition format, summed over every worker slot:
// requests by route and status, the latency histogram, open connections, live feed clients,
// in-flight, mode, the ledger's committed and refused records and how many processes' ledgers
// fail now.
QByteArray renderPrometheus(const FleetStore &fleet, const QList<QByteArray> &routeNames, const QByteArray &mode);

// Requests served by every process of this run.
quint64 totalRequests(const FleetStore &fleet);
// Serving processes whose ledger's last transaction failed (as published into their slots), but
// for the one in `exceptSlot`.
int failingLedgers(const FleetStore &fleet, int exceptSlot = -1);

} // namespace taxicore
