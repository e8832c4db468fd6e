#pragma once

#include "cluster/NodeDirectory.h"

#include <functional>

namespace taxicore {

class FleetStore;
class LeaderLease;
class Ledger;

// What a node's heartbeat says about it (cluster/NodeDirectory), read from the shared region, so
// the primary and a worker process sample alike: the execution model in force, the requests every
// process served, whether `lease` leads (no lease: a server outside a cluster leads itself) and
// whether `ledger` (may be null) saw records fail and none commit since the previous sample.
// Everything it is given must outlive the sampler.
std::function<NodeStatus()> nodeStatusSampler(const FleetStore &fleet, const Ledger *ledger, const LeaderLease *lease);

} // namespace taxicore
