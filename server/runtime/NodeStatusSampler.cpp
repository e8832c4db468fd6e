#include "runtime/NodeStatusSampler.h"

#include "cluster/LeaderLease.h"
#include "control/RuntimeMailbox.h"
#include "fleet/FleetStore.h"
#include "ledger/Ledger.h"
#include "metrics/PrometheusText.h"

namespace taxicore {

std::function<NodeStatus()> nodeStatusSampler(const FleetStore &fleet, const Ledger *ledger, const LeaderLease *lease)
{
    return [&fleet, ledger, lease, previous = ledger ? ledger->stats() : LedgerStats{}]() mutable {
        const RuntimeSettings now = RuntimeMailbox(fleet.control()).current();
        NodeStatus status;
        status.mode = modeName(now.mode);
        status.workers = now.mode == RuntimeMode::Processes ? now.workers : 0;
        status.threads = now.mode == RuntimeMode::Pool ? now.threads : 0;
        status.requestsServed = totalRequests(fleet);
        status.leader = !lease || lease->isLeader();
        if (ledger) {
            const LedgerStats stats = ledger->stats();
            status.ledgerOk = !(stats.failed > previous.failed && stats.committed == previous.committed);
            previous = stats;
        }
        return status;
    };
}

} // namespace taxicore
