#pragma once

#include "region/RegionLayout.h"

namespace taxicore {

// Records this process's served requests into its worker slot of the shared region.
// Relaxed atomics only: the console and /metrics sum slots without stopping anyone.
class MetricsRecorder {
public:
    explicit MetricsRecorder(WorkerSlot &slot)
        : m_slot(slot)
    {
    }

    void requestStarted() { m_slot.inFlight.fetch_add(1, std::memory_order_relaxed); }
    void requestFinished(int routeId, int status, double latencyUs);
    void connectionOpened() { m_slot.openConnections.fetch_add(1, std::memory_order_relaxed); }
    void connectionClosed() { m_slot.openConnections.fetch_sub(1, std::memory_order_relaxed); }
    // `delta` live feed clients more (fewer, when negative) than before.
    void feedClientsChanged(int delta)
    {
        m_slot.feedClients.fetch_add(uint64_t(int64_t(delta)), std::memory_order_relaxed);
    }
    WorkerSlot &slot() const { return m_slot; }

private:
    WorkerSlot &m_slot;
};

} // namespace taxicore
