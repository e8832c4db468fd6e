#pragma once

#include "../engine/BenchmarkRun.h"

#include <string>

namespace taxicore::bench {

// The per-second series of every stage as CSV, one row per stage and second.
std::string seriesCsv(const RunResult &run);

} // namespace taxicore::bench
