#pragma once

#include "wire/ConnectionLimits.h"

#include <QString>

namespace taxicore {

// A worker process (`taxicore-server --worker`): maps the primary's region (descriptor 3),
// serves the connections the primary passes over its channel (descriptor 4) or accepts on a
// listening socket it is given, beats its heartbeat, and drains and exits when told to.
struct WorkerOptions {
    int index = 1;
    QString cityPath;
    QString dataDir;
    QString durability;
    QString ledgerUrl;      // the primary's --ledger (empty: the SQLite file in dataDir)
    QString ledgerFiles;    // the primary's SQLite files (Ledger::fileFingerprint()): opened only if still those
    QString fleetUrl;       // the primary's --fleet (empty: the region alone; redis://: a cluster node)
    quint64 nodeOrigin = 0; // a cluster node's name on the feed: the primary's
    QString nodeName;       // the node's name and address in the node list (GET /admin/v1/cluster)
    QString nodeUrl;
    ConnectionLimits limits;
    int feedIdleTimeoutMs = 0;
};
int runWorker(const WorkerOptions &options);

} // namespace taxicore
