#pragma once

#include "cluster/PostgresSession.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace taxicore {

// Which node of a cluster runs the one simulator and demand generator: the one whose session holds
// a PostgreSQL advisory lock. A session ends with its process (kill -9 included: the server sees
// the socket close), which frees the lock; the others try every kRetryMs and one takes over.
// Runs on its own thread: every call to the database is bounded by the session's deadlines.
//
// A partition (no FIN, no RST: the leader and the database each just stop hearing from the other)
// is made safe by an ordering of two clocks, docs/cluster.md "Partitions":
//  - this side: the lead is a lease of kLeaseMs from the moment the last answered check was sent.
//    A check runs every kRetryMs with the lease's expiry as its deadline; unanswered by then, the
//    node stops leading. So a leader stops at most kLeaseMs after the database last heard from it.
//  - the database's side: the lock goes only with the session, and the server ends a silent
//    session only when its kernel gives up on the peer: tcp_keepalives_idle (first probe) and
//    tcp_user_timeout (unacknowledged data) after the last packet it received. Both must be at
//    least kServerSilenceMinMs (PostgreSQL's settings below), so the lock is released only after
//    the old leader has stopped: never two simulators.
//  - bounded: with those settings the server drops the session within kServerSilenceMaxMs, and a
//    node takes over within one kRetryMs after: the simulator stops for at most about
//    kServerSilenceMaxMs + kRetryMs. With PostgreSQL's defaults (keepalives after 2 hours,
//    retransmissions for about 15 minutes) it stays safe but no node leads until then.
class LeaderLease {
public:
    static constexpr int kRetryMs = 1000;
    static constexpr int kLeaseMs = 3000;
    static constexpr long long kLockKey = 7401702;

    // What the cluster's PostgreSQL must be set to (scripts/cluster.sh and the tests set these;
    // operators set them in postgresql.conf): tcp_keepalives_idle = 5, tcp_keepalives_interval =
    // 1, tcp_keepalives_count = 3, tcp_user_timeout = 6000. The earliest the server drops a silent
    // session is then min(idle, user timeout) = 5 s, the latest about max(user timeout, idle +
    // interval) = 6 s plus a retransmission tick.
    static constexpr int kServerKeepaliveIdleS = 5;
    static constexpr int kServerKeepaliveIntervalS = 1;
    static constexpr int kServerKeepaliveCount = 3;
    static constexpr int kServerUserTimeoutMs = 6000;
    static constexpr int kServerSilenceMinMs = std::min(kServerKeepaliveIdleS * 1000, kServerUserTimeoutMs);
    static constexpr int kServerSilenceMaxMs = 8000;
    // Slack for this node's step-down after the lease ends: the callback, a busy machine.
    static constexpr int kStepDownSlackMs = 2000;
    static_assert(kLeaseMs + kStepDownSlackMs <= kServerSilenceMinMs,
                  "a partitioned leader must stop before the database can give the lock to another node");
    static_assert(kRetryMs < kLeaseMs, "a leader checks several times per lease");

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
