#include "control/RuntimeMailbox.h"

#include "region/Clock.h"
#include "region/RegionLayout.h"
#include "region/SlotLock.h"

#include <QElapsedTimer>
#include <QThread>
#include <cstring>

namespace taxicore {

namespace {
// A request whose asker neither took its answer nor withdrew it this long after its own timeout
// (the asking process died while waiting) no longer holds the mailbox.
constexpr int64_t kAbandonedAfterMs = 1000;
} // namespace

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
        const uint64_t last = m_control.requestSequence.load(std::memory_order_acquire);
        const bool taken = m_control.collectedSequence.load(std::memory_order_acquire) != last;
        if (taken && clock::monotonicMs() <= m_control.requestDeadlineMs) {
            Answer busy;
            busy.busy = true;
            return busy;
        }
        m_control.requestMode = int32_t(wanted.mode);
        m_control.requestWorkers = wanted.workers;
        m_control.requestThreads = wanted.threads;
        m_control.requestPolicy = int32_t(wanted.policy);
        m_control.requestDeadlineMs = clock::monotonicMs() + timeoutMs + kAbandonedAfterMs;
        mine = last + 1;
        m_control.requestSequence.store(mine, std::memory_order_release);
    }
    QElapsedTimer timer;
    timer.start();
    for (;;) {
        const bool done = m_control.appliedSequence.load(std::memory_order_acquire) >= mine;
        if (done || timer.elapsed() >= timeoutMs) {
            SlotLock lock(m_control.mailboxLock);
            // Taken or withdrawn: either way the next asker may use the mailbox now.
            if (m_control.requestSequence.load(std::memory_order_relaxed) == mine)
                m_control.collectedSequence.store(mine, std::memory_order_release);
            if (!done || m_control.replySequence != mine)
                return {};
            Answer answer;
            answer.answered = true;
            answer.error = QString::fromUtf8(m_control.replyError);
            answer.applied.mode = RuntimeMode(m_control.replyMode);
            answer.applied.workers = m_control.replyWorkers;
            answer.applied.threads = m_control.replyThreads;
            answer.applied.policy = DistributionPolicy(m_control.replyPolicy);
            answer.generation = m_control.replyGeneration;
            return answer;
        }
        QThread::msleep(1);
    }
}

std::optional<RuntimeMailbox::Request> RuntimeMailbox::pending() const
{
    if (m_control.requestSequence.load(std::memory_order_acquire)
        <= m_control.appliedSequence.load(std::memory_order_acquire))
        return std::nullopt;
    SlotLock lock(m_control.mailboxLock);
    Request r;
    r.sequence = m_control.requestSequence.load(std::memory_order_relaxed);
    r.settings.mode = RuntimeMode(m_control.requestMode);
    r.settings.workers = m_control.requestWorkers;
    r.settings.threads = m_control.requestThreads;
    r.settings.policy = DistributionPolicy(m_control.requestPolicy);
    return r;
}

void RuntimeMailbox::answer(uint64_t sequence, const QString &error, const RuntimeSettings &applied)
{
    SlotLock lock(m_control.mailboxLock);
    const QByteArray utf8 = error.toUtf8().left(kEventTextBytes - 1);
    std::memcpy(m_control.replyError, utf8.constData(), std::size_t(utf8.size()));
    m_control.replyError[utf8.size()] = 0;
    m_control.replyMode = int32_t(applied.mode);
    m_control.replyWorkers = applied.workers;
    m_control.replyThreads = applied.threads;
    m_control.replyPolicy = int32_t(applied.policy);
    m_control.replyGeneration = m_control.generation.load(std::memory_order_acquire);
    m_control.replySequence = sequence;
    // Only the request handled: one written meanwhile (its asker took over a withdrawn slot) is
    // still pending and is applied on the next poll.
    m_control.appliedSequence.store(sequence, std::memory_order_release);
}

} // namespace taxicore
