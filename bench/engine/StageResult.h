#pragma once

#include "Histogram.h"
#include "LoadSettings.h"
#include "WorkerStats.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace taxicore::bench {

// One point of the per-second series (also what --progress prints each second).
struct SecondSample {
    int second = 0;            // 1, 2, ... since the measured window began
    double elapsedSeconds = 0; // length of this interval (the last one may be shorter)
    uint64_t responses = 0;    // in this interval
    double requestsPerSecond = 0;
    uint64_t errors = 0;         // in this interval
    double p99Ms = 0;            // corrected latency p99 of this interval
    double clientCpuPercent = 0; // worker threads' CPU over this interval, % of threads x time
    uint64_t totalResponses = 0; // since the start of the measured window
    uint64_t totalErrors = 0;
};

// The client's own load, to tell a server limit from a client limit.
struct ClientUsage {
    int threads = 0;
    double threadCpuSeconds = 0;    // user+system of the worker threads in the measured window
    double processCpuSeconds = 0;   // getrusage(RUSAGE_SELF) over the measured window
    double cpuPercentOfThreads = 0; // threadCpuSeconds / (elapsed x threads) x 100
    double cpuMicrosPerRequest = 0; // processCpuSeconds per response
    double scheduleLagP99Ms = 0;    // open loop only
    bool clientBound = false;
    std::string clientBoundReason; // empty when not client-bound
};

// Everything measured in one stage.
struct StageResult {
    std::string name; // stage label, e.g. "c64"
    std::string url;
    std::string requests; // description of the request mix
    LoadSettings settings;
    int threads = 0;
    bool interrupted = false; // stopped early by requestStop()
    double elapsedSeconds = 0;
    WorkerStats totals;                    // counters and the corrected/uncorrected/lag histograms
    std::map<int, uint64_t> errorStatuses; // non-2xx answers counted as errors, by status
    std::vector<std::string> kindNames;    // names of totals.kinds(), when the plan mixes kinds
    std::vector<SecondSample> series;
    ClientUsage client;

    uint64_t responses() const { return totals.value(WorkerStats::Responses); }
    uint64_t errors() const { return totals.errors(); }
    double requestsPerSecond() const;
};

// The rule for "client-bound", kept in one place (documented in bench/README.md).
inline constexpr double kClientBoundCpuPercent = 90.0;
inline constexpr double kClientBoundLagP99Ms = 5.0;
void judgeClientBound(ClientUsage &client, bool openLoop);

} // namespace taxicore::bench
