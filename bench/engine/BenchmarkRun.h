#pragma once

#include "LoadEngine.h"
#include "LoadSettings.h"
#include "RequestPlan.h"
#include "StageResult.h"
#include "Target.h"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace taxicore::bench {

// What one stage will do.
struct StagePlan {
    std::string label;
    LoadSettings settings;
    std::shared_ptr<const RequestPlan> plan;
};

// Everything a run produced, stage by stage, with what it reproduces.
struct RunResult {
    std::string scenarioName; // empty for an ad-hoc URL run
    std::string scenarioSource;
    std::string scenarioDescription;
    std::string url;
    std::string startedAtUtc; // ISO 8601
    std::vector<StageResult> stages;

    bool clientBound() const;
};

// Runs the stages of a scenario one after the other against one target.
class BenchmarkRun {
public:
    using StageStartCallback = std::function<void(int stageIndex, const StagePlan &)>;
    using ProgressCallback = std::function<void(int stageIndex, const SecondSample &)>;

    BenchmarkRun(Target target, std::vector<StagePlan> stages);

    RunResult run(const StageStartCallback &onStageStart = {}, const ProgressCallback &onProgress = {});
    // From any thread: ends the current stage early and skips the rest.
    void requestStop();

    const std::vector<StagePlan> &stages() const { return m_stages; }

private:
    Target m_target;
    std::vector<StagePlan> m_stages;
    std::mutex m_mutex; // guards m_current against requestStop() from another thread
    LoadEngine *m_current = nullptr;
    std::atomic<bool> m_stopRequested{false};
};

std::string currentUtcIso8601();

} // namespace taxicore::bench
