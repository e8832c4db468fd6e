#pragma once

#include "fleet/FleetStore.h"

#include <memory>

namespace taxicore {

// Where a node's fleet lives, chosen by `--fleet`: empty or "shm:" is this machine's region alone
// (FleetStore::open), "redis://..." a node of a cluster (ClusterFleet, with `--ledger
// postgresql://...`).
struct FleetBackendOptions {
    QString fleetUrl;
    QString ledgerUrl;
    bool primary = false; // the primary applies the other nodes' changes; workers only publish
    quint64 origin = 0;   // names this node on the cluster's feed: the same in its workers
};

bool isClusterFleetUrl(const QString &fleetUrl);
// Null with `error` naming the problem.
std::unique_ptr<FleetStore> openFleetBackend(SharedRegion &region, const FleetBackendOptions &options, QString *error);

} // namespace taxicore
