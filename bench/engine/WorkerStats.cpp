#include "WorkerStats.h"

#include <atomic>

namespace taxicore::bench {

namespace {

void bump(uint64_t &slot, uint64_t amount)
{
    std::atomic_ref<uint64_t>(slot).store(slot + amount, std::memory_order_relaxed);
}

uint64_t load(const uint64_t &slot)
{
    return std::atomic_ref<uint64_t>(const_cast<uint64_t &>(slot)).load(std::memory_order_relaxed);
}

} // namespace

void WorkerStats::add(Counter counter, uint64_t amount)
{
    bump(m_counters[counter], amount);
}

void WorkerStats::addStatus(int status)
{
    if (status >= 0 && status < kMaxStatus)
        bump(m_statusCounts[static_cast<std::size_t>(status)], 1);
}

uint64_t WorkerStats::errors() const
{
    return m_counters[HttpErrors] + m_counters[ConnectErrors] + m_counters[ReadErrors] + m_counters[WriteErrors]
           + m_counters[Timeouts];
}

WorkerStats WorkerStats::snapshot() const
{
    WorkerStats copy;
    for (std::size_t i = 0; i < m_counters.size(); ++i)
        copy.m_counters[i] = load(m_counters[i]);
    for (std::size_t i = 0; i < m_statusCounts.size(); ++i)
        copy.m_statusCounts[i] = load(m_statusCounts[i]);
    copy.corrected = corrected.snapshot();
    copy.uncorrected = uncorrected.snapshot();
    copy.scheduleLag = scheduleLag.snapshot();
    return copy;
}

void WorkerStats::merge(const WorkerStats &other)
{
    for (std::size_t i = 0; i < m_counters.size(); ++i)
        m_counters[i] += other.m_counters[i];
    for (std::size_t i = 0; i < m_statusCounts.size(); ++i)
        m_statusCounts[i] += other.m_statusCounts[i];
    corrected.merge(other.corrected);
    uncorrected.merge(other.uncorrected);
    scheduleLag.merge(other.scheduleLag);
    if (m_kinds.size() < other.m_kinds.size())
        m_kinds.resize(other.m_kinds.size());
    for (std::size_t i = 0; i < other.m_kinds.size(); ++i) {
        m_kinds[i].responses += other.m_kinds[i].responses;
        m_kinds[i].errors += other.m_kinds[i].errors;
        m_kinds[i].latency.merge(other.m_kinds[i].latency);
    }
}

void WorkerStats::recordKindResponse(int kind, int64_t latencyNs, bool error)
{
    if (kind < 0 || static_cast<std::size_t>(kind) >= m_kinds.size())
        return;
    KindStats &stats = m_kinds[static_cast<std::size_t>(kind)];
    ++stats.responses;
    stats.errors += error ? 1 : 0;
    stats.latency.record(latencyNs);
}

void WorkerStats::recordKindFailure(int kind)
{
    if (kind >= 0 && static_cast<std::size_t>(kind) < m_kinds.size())
        ++m_kinds[static_cast<std::size_t>(kind)].errors;
}

} // namespace taxicore::bench
