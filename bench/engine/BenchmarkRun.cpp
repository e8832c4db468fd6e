#include "BenchmarkRun.h"

#include <chrono>
#include <ctime>
#include <thread>

namespace taxicore::bench {

namespace {

// Between stages the server may still be answering the previous stage's abandoned requests:
// let it settle so they do not slow the next stage down. Checked for stop requests in steps.
constexpr auto kSettleBetweenStages = std::chrono::seconds(2);
constexpr auto kSettleStep = std::chrono::milliseconds(20);

} // namespace

bool RunResult::clientBound() const
{
    for (const StageResult &stage : stages) {
        if (stage.client.clientBound)
            return true;
    }
    return false;
}

std::string currentUtcIso8601()
{
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

BenchmarkRun::BenchmarkRun(Target target, std::vector<StagePlan> stages)
    : m_target(std::move(target))
    , m_stages(std::move(stages))
{
}

RunResult BenchmarkRun::run(const StageStartCallback &onStageStart, const ProgressCallback &onProgress)
{
    RunResult result;
    result.url = m_target.url;
    result.startedAtUtc = currentUtcIso8601();
    for (std::size_t i = 0; i < m_stages.size() && !m_stopRequested; ++i) {
        const int index = static_cast<int>(i);
        for (auto waited = std::chrono::milliseconds(0); i > 0 && waited < kSettleBetweenStages && !m_stopRequested;
             waited += kSettleStep)
            std::this_thread::sleep_for(kSettleStep);
        if (m_stopRequested)
            break;
        if (onStageStart)
            onStageStart(index, m_stages[i]);
        LoadEngine engine(m_target, m_stages[i].settings, m_stages[i].plan);
        {
            std::lock_guard lock(m_mutex);
            m_current = &engine;
            if (m_stopRequested)
                engine.requestStop();
        }
        StageResult stage = engine.run([&](const SecondSample &sample) {
            if (onProgress)
                onProgress(index, sample);
        });
        {
            std::lock_guard lock(m_mutex);
            m_current = nullptr;
        }
        stage.name = m_stages[i].label;
        result.stages.push_back(std::move(stage));
    }
    return result;
}

void BenchmarkRun::requestStop()
{
    m_stopRequested = true;
    std::lock_guard lock(m_mutex);
    if (m_current)
        m_current->requestStop();
}

} // namespace taxicore::bench
