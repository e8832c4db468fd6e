#include "StageResult.h"

#include <cstdio>

namespace taxicore::bench {

double StageResult::requestsPerSecond() const
{
    return elapsedSeconds > 0 ? static_cast<double>(responses()) / elapsedSeconds : 0.0;
}

void judgeClientBound(ClientUsage &client, bool openLoop)
{
    char reason[160];
    if (client.cpuPercentOfThreads >= kClientBoundCpuPercent) {
        std::snprintf(reason, sizeof reason, "client threads were busy %.0f%% of the time (limit %.0f%%)",
                      client.cpuPercentOfThreads, kClientBoundCpuPercent);
        client.clientBound = true;
        client.clientBoundReason = reason;
    } else if (openLoop && client.scheduleLagP99Ms > kClientBoundLagP99Ms) {
        std::snprintf(reason, sizeof reason, "sends left %.1f ms late at p99 (limit %.1f ms)", client.scheduleLagP99Ms,
                      kClientBoundLagP99Ms);
        client.clientBound = true;
        client.clientBoundReason = reason;
    } else {
        client.clientBound = false;
        client.clientBoundReason.clear();
    }
}

} // namespace taxicore::bench
