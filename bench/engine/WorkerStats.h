#pragma once

#include "Histogram.h"

#include <array>
#include <cstdint>
#include <vector>

namespace taxicore::bench {

// What a worker counts. Written by the worker thread only; the coordinator may take a
// snapshot() at any moment for the per-second series (relaxed atomics, no locks).
class WorkerStats {
public:
    enum Counter {
        Responses,      // complete responses of any status
        Successes,      // 2xx, or an expected answer of the scenario
        NoCarAvailable, // taxi scenarios: 409 on booking
        Conflicts,      // taxi scenarios: 409 on a transition tried tolerantly
        HttpErrors,     // other non-2xx
        ConnectErrors,
        ReadErrors, // reset or closed before the response was complete, or unparsable
        WriteErrors,
        Timeouts,
        BytesRead,
        ConnectionsOpened,
        UnfinishedAtEnd, // duration mode: counted requests still in flight when time was up
        CounterCount
    };
    static constexpr int kMaxStatus = 600;

    void add(Counter counter, uint64_t amount = 1);
    void addStatus(int status);
    uint64_t value(Counter counter) const { return m_counters[counter]; }
    uint64_t statusCount(int status) const { return m_statusCounts[static_cast<std::size_t>(status)]; }
    uint64_t errors() const;

    // Per kind of request (the plan's kindNames()), read only once the workers have finished:
    // snapshot() leaves it out.
    struct KindStats {
        uint64_t responses = 0;
        uint64_t errors = 0; // non-2xx errors and failed requests
        Histogram latency;   // corrected latency of the responses
    };
    void setKindCount(std::size_t kinds) { m_kinds.resize(kinds); }
    void recordKindResponse(int kind, int64_t latencyNs, bool error);
    void recordKindFailure(int kind);
    const std::vector<KindStats> &kinds() const { return m_kinds; }

    WorkerStats snapshot() const;
    void merge(const WorkerStats &other);

    Histogram corrected;   // from the intended send time (open loop); = uncorrected in closed loop
    Histogram uncorrected; // from the actual send time
    Histogram scheduleLag; // open loop: how late a send left compared to its schedule

private:
    std::array<uint64_t, CounterCount> m_counters{};
    std::array<uint64_t, kMaxStatus> m_statusCounts{};
    std::vector<KindStats> m_kinds;
};

} // namespace taxicore::bench
