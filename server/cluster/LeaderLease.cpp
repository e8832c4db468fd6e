#include "cluster/LeaderLease.h"

#include <QDebug>

namespace taxicore {

LeaderLease::LeaderLease(const QString &postgresUrl, std::function<void(bool leader)> changed)
    : m_session(postgresUrl, kLeaseMs)
    , m_changed(std::move(changed))
    , m_thread([this] { run(); })
{
}

LeaderLease::~LeaderLease()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    m_thread.join();
    m_session.disconnect(); // frees the lock at once for the next leader
    setLeader(false);
}

void LeaderLease::setLeader(bool leader)
{
    if (m_leader.exchange(leader, std::memory_order_acq_rel) == leader)
        return;
    qInfo().noquote() << (leader ? "cluster: this node leads (simulator and demand run here)"
                                 : "cluster: this node no longer leads");
    if (m_changed)
        m_changed(leader);
}

void LeaderLease::run()
{
    using Clock = PostgresSession::Clock;
    static const QByteArray tryLock = "SELECT pg_try_advisory_lock(" + QByteArray::number(kLockKey) + ")";
    // When the last answered check was sent: the database heard from this session no earlier.
    Clock::time_point confirmed;
    std::unique_lock lock(m_mutex);
    while (!m_stopping) {
        lock.unlock();
        const Clock::time_point sent = Clock::now();
        if (isLeader()) {
            // Still ours while the session lives, on this very connection (a reconnected session
            // holds nothing). Unanswered before the lease ends: the database may soon give the
            // lock to another node, so stop first (LeaderLease.h).
            const Clock::time_point expiry = confirmed + std::chrono::milliseconds(kLeaseMs);
            if (m_session.isConnected() && sent < expiry && m_session.queryValue("SELECT 1", expiry)) {
                confirmed = sent;
            } else {
                qWarning().noquote() << "cluster: no answer from" << m_session.location() << "within the lead's"
                                     << kLeaseMs << "ms lease:" << m_session.lastError();
                setLeader(false);
                // Dropped, not kept: on a live connection this frees the lock at once.
                m_session.disconnect();
            }
        } else if (const auto got = m_session.queryValue(tryLock.constData())) {
            if (*got == "t") {
                confirmed = sent;
                setLeader(true);
            }
        }
        lock.lock();
        m_wake.wait_for(lock, std::chrono::milliseconds(kRetryMs), [this] { return m_stopping; });
    }
}

} // namespace taxicore
