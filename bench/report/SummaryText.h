#pragma once

#include "../engine/BenchmarkRun.h"

#include <string>

namespace taxicore::bench {

// The human summary, laid out like wrk's so the figures are easy to compare side by side.
std::string stageSummaryText(const StageResult &stage);
std::string runHeaderText(const RunResult &run);
std::string formatDurationNs(double ns);
std::string formatBytes(double bytes);

} // namespace taxicore::bench
