#pragma once

#include "LoadSettings.h"
#include "RequestPlan.h"
#include "StageResult.h"
#include "Target.h"

#include <atomic>
#include <functional>
#include <memory>
#include <string>

namespace taxicore::bench {

struct WorkerShared;

// Runs one load stage: starts the worker threads, samples them once a second, and merges their
// counters into a StageResult. Usable from the CLI and from the console (call run() on a
// thread of your own; requestStop() from any thread).
class LoadEngine {
public:
    using ProgressCallback = std::function<void(const SecondSample &)>;

    LoadEngine(Target target, LoadSettings settings, std::shared_ptr<const RequestPlan> plan);
    ~LoadEngine();
    LoadEngine(const LoadEngine &) = delete;
    LoadEngine &operator=(const LoadEngine &) = delete;

    // Blocks until the stage ends; `progress` is called on the calling thread once a second.
    StageResult run(const ProgressCallback &progress = {});
    void requestStop();

private:
    Target m_target;
    LoadSettings m_settings;
    std::shared_ptr<const RequestPlan> m_plan;
    std::unique_ptr<WorkerShared> m_shared;
    std::atomic<bool> m_stopRequested{false};
};

} // namespace taxicore::bench
