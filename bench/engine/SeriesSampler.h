#pragma once

#include "StageResult.h"
#include "Worker.h"
#include "WorkerStats.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace taxicore::bench {

// Turns the workers' running totals into the per-second series: each sample is the difference
// between two snapshots (responses, errors, the corrected histogram for p99, thread CPU).
// Runs on the coordinating thread while the workers keep recording.
class SeriesSampler {
public:
    // CPU time (ns) used so far by worker `index`.
    using CpuReader = std::function<int64_t(std::size_t index)>;

    SeriesSampler(const std::vector<std::unique_ptr<Worker>> &workers, CpuReader cpuOf, int64_t startNs);

    // The interval since the previous sample (or the start), numbered `second`.
    SecondSample sample(int64_t nowNs, int second);
    int64_t lastSampleNs() const { return m_lastSampleNs; }

private:
    const std::vector<std::unique_ptr<Worker>> &m_workers;
    CpuReader m_cpuOf;
    WorkerStats m_previous;
    std::vector<int64_t> m_previousCpuNs;
    int64_t m_lastSampleNs;
};

} // namespace taxicore::bench
