#include "LoadEngine.h"

#include "Clock.h"
#include "FileDescriptorLimit.h"
#include "SeriesSampler.h"
#include "Worker.h"

#include <pthread.h>
#include <sys/resource.h>

#include <algorithm>
#include <limits>
#include <thread>

namespace taxicore::bench {

namespace {

// The coordinator wakes this often to notice finished workers and stop requests.
constexpr int64_t kCoordinatorPollNs = 20'000'000;
// A trailing partial second shorter than this is folded away rather than reported as a point.
constexpr double kMinTrailingIntervalSeconds = 0.05;
constexpr double kNanosPerMilli = 1e6;

double processCpuSeconds()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const auto seconds = [](const timeval &t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// CPU time of a live worker thread; once it has finished, what it recorded itself.
int64_t workerCpuNs(std::thread &thread, const Worker &worker)
{
    if (!worker.done()) {
        clockid_t clock{};
        timespec now{};
        if (pthread_getcpuclockid(thread.native_handle(), &clock) == 0 && clock_gettime(clock, &now) == 0)
            return int64_t{now.tv_sec} * kNanosPerSecond + now.tv_nsec;
    }
    return worker.cpuAtEndNs();
}

} // namespace

LoadEngine::LoadEngine(Target target, LoadSettings settings, std::shared_ptr<const RequestPlan> plan)
    : m_target(std::move(target))
    , m_settings(settings)
    , m_plan(std::move(plan))
{
}

LoadEngine::~LoadEngine() = default;

void LoadEngine::requestStop()
{
    m_stopRequested = true;
}

StageResult LoadEngine::run(const ProgressCallback &progress)
{
    const int threadCount = m_settings.effectiveThreads();
    // Best effort: a shortfall shows as connect errors (EMFILE); the CLI refuses to start instead.
    ensureFileDescriptorsFor(m_settings.connections);
    m_shared = std::make_unique<WorkerShared>();
    WorkerShared &shared = *m_shared;
    shared.target = &m_target;
    shared.settings = &m_settings;
    shared.plan = m_plan.get();
    shared.startNs = monotonicNowNs();
    shared.measureStartNs = shared.startNs + m_settings.warmup.count();
    shared.endNs = m_settings.countLimited() ? std::numeric_limits<int64_t>::max()
                                             : shared.measureStartNs + m_settings.duration.count();
    if (m_settings.openLoop())
        shared.requestIntervalNs = static_cast<int64_t>(static_cast<double>(m_settings.connections)
                                                        * static_cast<double>(kNanosPerSecond) / m_settings.rate);
    shared.stopRequested = m_stopRequested.load();

    std::vector<std::unique_ptr<Worker>> workers;
    for (int t = 0; t < threadCount; ++t) {
        std::vector<uint32_t> indices;
        for (int c = t; c < m_settings.connections; c += threadCount)
            indices.push_back(static_cast<uint32_t>(c));
        workers.push_back(std::make_unique<Worker>(shared, std::move(indices)));
    }
    std::vector<std::thread> threads;
    for (auto &worker : workers)
        threads.emplace_back([&worker] { worker->run(); });

    const auto allDone = [&] {
        return std::all_of(workers.begin(), workers.end(), [](const auto &w) { return w->done(); });
    };
    const auto sleepUntil = [&](int64_t wakeNs) {
        while (true) {
            shared.stopRequested = shared.stopRequested.load() || m_stopRequested.load();
            const int64_t now = monotonicNowNs();
            if (now >= wakeNs || allDone())
                return;
            std::this_thread::sleep_for(std::chrono::nanoseconds(std::min(wakeNs - now, kCoordinatorPollNs)));
        }
    };

    sleepUntil(shared.measureStartNs);
    const double processCpuAtStart = processCpuSeconds();
    SeriesSampler sampler(
        workers, [&](std::size_t i) { return workerCpuNs(threads[i], *workers[i]); }, shared.measureStartNs);
    StageResult result;
    const auto takeSample = [&](int64_t now) {
        result.series.push_back(sampler.sample(now, static_cast<int>(result.series.size()) + 1));
        if (progress)
            progress(result.series.back());
    };
    for (int64_t tick = shared.measureStartNs + kNanosPerSecond;; tick += kNanosPerSecond) {
        sleepUntil(std::min(tick, shared.endNs));
        const int64_t now = monotonicNowNs();
        if (allDone() || now >= shared.endNs)
            break;
        takeSample(now);
    }
    for (std::thread &thread : threads)
        thread.join();

    int64_t finishedNs = shared.measureStartNs;
    for (const auto &worker : workers)
        finishedNs = std::max(finishedNs, worker->finishedAtNs());
    finishedNs = std::min(finishedNs, shared.endNs);
    const double trailingSeconds = static_cast<double>(finishedNs - sampler.lastSampleNs()) / kNanosPerSecond;
    if (trailingSeconds >= kMinTrailingIntervalSeconds || result.series.empty())
        takeSample(finishedNs);

    result.url = m_target.url;
    result.requests = m_plan->describe();
    result.kindNames = m_plan->kindNames();
    result.settings = m_settings;
    result.threads = threadCount;
    result.interrupted = m_stopRequested.load();
    result.elapsedSeconds = static_cast<double>(finishedNs - shared.measureStartNs) / kNanosPerSecond;
    int64_t threadCpuNs = 0;
    for (const auto &worker : workers) {
        result.totals.merge(worker->stats());
        threadCpuNs += worker->cpuAtEndNs() - worker->cpuAtMeasureStartNs();
    }
    for (int status = 0; status < WorkerStats::kMaxStatus; ++status) {
        if (const uint64_t count = result.totals.statusCount(status))
            result.errorStatuses[status] = count;
    }

    ClientUsage &client = result.client;
    client.threads = threadCount;
    client.threadCpuSeconds = static_cast<double>(threadCpuNs) / kNanosPerSecond;
    client.processCpuSeconds = processCpuSeconds() - processCpuAtStart;
    if (result.elapsedSeconds > 0)
        client.cpuPercentOfThreads = 100.0 * client.threadCpuSeconds / (result.elapsedSeconds * threadCount);
    if (result.responses() > 0)
        client.cpuMicrosPerRequest = client.processCpuSeconds * 1e6 / static_cast<double>(result.responses());
    client.scheduleLagP99Ms = static_cast<double>(result.totals.scheduleLag.valueAtPercentile(99)) / kNanosPerMilli;
    judgeClientBound(client, m_settings.openLoop());
    return result;
}

} // namespace taxicore::bench
