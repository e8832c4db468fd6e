#pragma once

#include "Connection.h"
#include "LoadSettings.h"
#include "RequestPlan.h"
#include "Target.h"
#include "WorkerStats.h"

#include <atomic>
#include <cstdint>
#include <queue>
#include <vector>

namespace taxicore::bench {

// State every worker of a stage reads; written only by the coordinator before the threads start
// (except the atomics).
struct WorkerShared {
    const Target *target = nullptr;
    const LoadSettings *settings = nullptr;
    const RequestPlan *plan = nullptr;
    int64_t startNs = 0;           // the run (and warm-up) starts
    int64_t measureStartNs = 0;    // warm-up ends; requests intended from here on are counted
    int64_t endNs = 0;             // duration mode: the measured window ends (INT64_MAX in count mode)
    int64_t requestIntervalNs = 0; // open loop: time between two sends of one connection
    std::atomic<uint64_t> ticketsIssued{0};
    std::atomic<bool> stopRequested{false};
};

// One thread of the load generator: its connections, its epoll loop, its counters. Plain C++
// on the hot path: non-blocking sockets, level-triggered epoll, no allocation per request for
// fixed request mixes.
class Worker {
public:
    Worker(WorkerShared &shared, std::vector<uint32_t> connectionIndices);
    ~Worker();
    Worker(const Worker &) = delete;
    Worker &operator=(const Worker &) = delete;

    void run();

    const WorkerStats &stats() const { return m_stats; }
    int64_t cpuAtMeasureStartNs() const { return m_cpuAtMeasureStartNs.load(); }
    int64_t cpuAtEndNs() const { return m_cpuAtEndNs.load(); }
    int64_t finishedAtNs() const { return m_finishedAtNs.load(); }
    bool done() const { return m_done.load(); }

private:
    using WakeUp = std::pair<int64_t, uint32_t>; // (time, local connection index)

    void scheduleFirstRequests(int64_t now);
    void runDueWakeUps(int64_t now);
    void handleEvent(Connection &connection, uint32_t events);
    void startRequest(Connection &connection, int64_t intendedNs, int64_t now);
    bool claimTicket(int64_t now);
    void openSocket(Connection &connection);
    void finishConnect(Connection &connection);
    void writeRequest(Connection &connection);
    void readResponse(Connection &connection);
    void drainIdleSocket(Connection &connection);
    void completeRequest(Connection &connection);
    void failRequest(Connection &connection, WorkerStats::Counter errorClass);
    bool retryOnFreshSocket(Connection &connection);
    void scheduleNext(Connection &connection, int64_t now, int64_t notBeforeNs);
    void checkTimeouts(int64_t now);
    void setInterest(Connection &connection, uint32_t events);
    void closeSocket(Connection &connection);
    bool measuring(int64_t now) const { return now >= m_shared.measureStartNs; }
    bool allFinished() const;
    int64_t nextWakeNs(int64_t now) const;
    uint32_t localIndex(const Connection &connection) const;

    WorkerShared &m_shared;
    const LoadSettings &m_settings;
    std::vector<Connection> m_connections;
    std::priority_queue<WakeUp, std::vector<WakeUp>, std::greater<>> m_wakeUps;
    std::vector<char> m_readBuffer;
    WorkerStats m_stats;
    FastRandom m_random;
    int m_epollFd = -1;
    int64_t m_nextTimeoutScanNs = 0;
    bool m_cpuSampled = false;
    std::atomic<int64_t> m_cpuAtMeasureStartNs{0};
    std::atomic<int64_t> m_cpuAtEndNs{0};
    std::atomic<int64_t> m_finishedAtNs{0};
    std::atomic<bool> m_done{false};
};

} // namespace taxicore::bench
