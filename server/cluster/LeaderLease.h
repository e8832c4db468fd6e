#pragma once

#include "cluster/PostgresSession.h"

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace taxicore {

// Which node of a cluster runs the one simulator and demand generator: the one whose session holds
// a PostgreSQL advisory lock. A session ends with its process (kill -9 included: the server sees
// the socket close), which frees the lock; the others try every kRetryMs and one takes over.
// Runs on its own thread: every call to the database blocks, up to the session's timeout.
class LeaderLease {
public:
    static constexpr int kRetryMs = 1000;
    static constexpr long long kLockKey = 7401702;

    // `changed(leader)` runs on the lease's thread whenever this node gains or loses the lead.
    LeaderLease(const QString &postgresUrl, std::function<void(bool leader)> changed);
    ~LeaderLease();
    LeaderLease(const LeaderLease &) = delete;
    LeaderLease &operator=(const LeaderLease &) = delete;

    bool isLeader() const { return m_leader.load(std::memory_order_acquire); }

private:
    void run();
    void setLeader(bool leader);

    PostgresSession m_session;
    std::function<void(bool)> m_changed;
    std::atomic<bool> m_leader{false};
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stopping = false;
    std::thread m_thread;
};

} // namespace taxicore
