#include "cluster/LeaderLease.h"

#include <QDebug>

namespace taxicore {

LeaderLease::LeaderLease(const QString &postgresUrl, std::function<void(bool leader)> changed)
    : m_session(postgresUrl, kRetryMs)
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
    static const QByteArray tryLock = "SELECT pg_try_advisory_lock(" + QByteArray::number(kLockKey) + ")";
    std::unique_lock lock(m_mutex);
    while (!m_stopping) {
        lock.unlock();
        if (isLeader()) {
            // Still ours while the session lives: a failed round trip means the database may
            // already have given the lock to another node.
            if (!m_session.queryValue("SELECT 1"))
                setLeader(false);
        } else if (const auto got = m_session.queryValue(tryLock.constData())) {
            if (*got == "t")
                setLeader(true);
        }
        lock.lock();
        m_wake.wait_for(lock, std::chrono::milliseconds(kRetryMs), [this] { return m_stopping; });
    }
}

} // namespace taxicore
