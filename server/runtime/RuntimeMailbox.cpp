#include "runtime/RuntimeMailbox.h"

#include "fleet/RegionLayout.h"
#include "fleet/SlotLock.h"

#include <QElapsedTimer>
#include <QThread>
#include <cstring>

namespace taxicore {

RuntimeSettings RuntimeMailbox::current() const
{
    RuntimeSettings s;
    s.mode = RuntimeMode(m_control.mode.load(std::memory_order_acquire));
    s.workers = m_control.workers.load(std::memory_order_relaxed);
    s.threads = m_control.threads.load(std::memory_order_relaxed);
    s.policy = DistributionPolicy(m_control.policy.load(std::memory_order_relaxed));
    return s;
}

void RuntimeMailbox::publish(const RuntimeSettings &s)
{
    m_control.workers.store(s.workers, std::memory_order_relaxed);
    m_control.threads.store(s.threads, std::memory_order_relaxed);
    m_control.policy.store(uint32_t(s.policy), std::memory_order_relaxed);
    m_control.mode.store(uint32_t(s.mode), std::memory_order_release);
    m_control.generation.fetch_add(1, std::memory_order_acq_rel);
}

RuntimeMailbox::Answer RuntimeMailbox::ask(const RuntimeSettings &wanted, int timeoutMs) const
{
    uint64_t mine = 0;
    {
        SlotLock lock(m_control.mailboxLock);
        m_control.requestMode = int32_t(wanted.mode);
        m_control.requestWorkers = wanted.workers;
        m_control.requestThreads = wanted.threads;
        m_control.requestPolicy = int32_t(wanted.policy);
        m_control.replyError[0] = 0;
        mine = m_control.requestSequence.fetch_add(1, std::memory_order_acq_rel) + 1;
    }
    QElapsedTimer timer;
    timer.start();
    while (timer.elapsed() < timeoutMs) {
        if (m_control.appliedSequence.load(std::memory_order_acquire) >= mine) {
            SlotLock lock(m_control.mailboxLock);
            return {true, QString::fromUtf8(m_control.replyError)};
        }
        QThread::msleep(1);
    }
    return {false, {}};
}

std::optional<RuntimeSettings> RuntimeMailbox::pending() const
{
    if (m_control.requestSequence.load(std::memory_order_acquire)
        <= m_control.appliedSequence.load(std::memory_order_acquire))
        return std::nullopt;
    SlotLock lock(m_control.mailboxLock);
    RuntimeSettings s;
    s.mode = RuntimeMode(m_control.requestMode);
    s.workers = m_control.requestWorkers;
    s.threads = m_control.requestThreads;
    s.policy = DistributionPolicy(m_control.requestPolicy);
    return s;
}

void RuntimeMailbox::answer(const QString &error)
{
    SlotLock lock(m_control.mailboxLock);
    const QByteArray utf8 = error.toUtf8().left(kEventTextBytes - 1);
    std::memcpy(m_control.replyError, utf8.constData(), std::size_t(utf8.size()));
    m_control.replyError[utf8.size()] = 0;
    m_control.appliedSequence.store(m_control.requestSequence.load(std::memory_order_acquire),
                                    std::memory_order_release);
}

} // namespace taxicore
