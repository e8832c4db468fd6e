#pragma once

#include "wire/ConnectionLimits.h"

#include <QString>

namespace taxicore {

// A worker process (`taxicore-server --worker`): maps the primary's region (descriptor 3),
// serves the connections the primary passes over its channel (descriptor 4) or accepts on a
// listening socket it is given, beats its heartbeat, and drains and exits when told to.
// `ledgerUrl` is the primary's --ledger (empty: the SQLite file in dataDir).
int runWorker(int workerIndex, const QString &cityPath, const QString &dataDir, const QString &durability,
              const QString &ledgerUrl, ConnectionLimits limits, int feedIdleTimeoutMs);

} // namespace taxicore
