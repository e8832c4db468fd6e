#include "metrics/MetricsRecorder.h"

#include "metrics/MetricsLimits.h"

namespace taxicore {

void MetricsRecorder::requestFinished(int routeId, int status, double latencyUs)
{
    constexpr auto relaxed = std::memory_order_relaxed;
    m_slot.inFlight.fetch_sub(1, relaxed);
    m_slot.requests.fetch_add(1, relaxed);
    m_slot.latencySumUs.fetch_add(static_cast<uint64_t>(latencyUs), relaxed);
    m_slot.latency[latencyBucket(latencyUs)].fetch_add(1, relaxed);
    const int route = routeId >= 0 && routeId < kRouteKinds ? routeId : 0;
    m_slot.byRouteStatus[route][statusIndex(status)].fetch_add(1, relaxed);
}

} // namespace taxicore
