#include "SeriesSampler.h"

#include "Clock.h"

namespace taxicore::bench {

namespace {

constexpr double kNanosPerMilli = 1e6;

} // namespace

SeriesSampler::SeriesSampler(const std::vector<std::unique_ptr<Worker>> &workers, CpuReader cpuOf, int64_t startNs)
    : m_workers(workers)
    , m_cpuOf(std::move(cpuOf))
    , m_lastSampleNs(startNs)
{
    for (std::size_t i = 0; i < m_workers.size(); ++i)
        m_previousCpuNs.push_back(m_cpuOf(i));
}

SecondSample SeriesSampler::sample(int64_t nowNs, int second)
{
    WorkerStats current;
    int64_t cpuDeltaNs = 0;
    for (std::size_t i = 0; i < m_workers.size(); ++i) {
        current.merge(m_workers[i]->stats().snapshot());
        const int64_t cpu = m_cpuOf(i);
        cpuDeltaNs += cpu - m_previousCpuNs[i];
        m_previousCpuNs[i] = cpu;
    }
    const int64_t intervalNs = nowNs - m_lastSampleNs;
    SecondSample sample;
    sample.second = second;
    sample.elapsedSeconds = static_cast<double>(intervalNs) / kNanosPerSecond;
    sample.totalResponses = current.value(WorkerStats::Responses);
    sample.totalErrors = current.errors();
    sample.responses = sample.totalResponses - m_previous.value(WorkerStats::Responses);
    sample.errors = sample.totalErrors - m_previous.errors();
    if (intervalNs > 0) {
        sample.requestsPerSecond = static_cast<double>(sample.responses) / sample.elapsedSeconds;
        sample.clientCpuPercent = 100.0 * static_cast<double>(cpuDeltaNs)
                                  / (static_cast<double>(intervalNs) * static_cast<double>(m_workers.size()));
    }
    sample.p99Ms =
        static_cast<double>(current.corrected.since(m_previous.corrected).valueAtPercentile(99)) / kNanosPerMilli;
    m_previous = std::move(current);
    m_lastSampleNs = nowNs;
    return sample;
}

} // namespace taxicore::bench
