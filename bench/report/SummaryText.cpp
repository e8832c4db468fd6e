#include "SummaryText.h"

#include <cstdio>

namespace taxicore::bench {

namespace {

constexpr int kLineBytes = 512;

std::string format(const char *pattern, auto... values)
{
    char line[kLineBytes];
    std::snprintf(line, sizeof line, pattern, values...);
    return line;
}

std::string latencyRow(const char *label, const Histogram &h)
{
    return format("    %-12s %9s %9s %9s %9s %9s %9s %9s\n", label, formatDurationNs(h.mean()).c_str(),
                  formatDurationNs(h.stddev()).c_str(),
                  formatDurationNs(static_cast<double>(h.valueAtPercentile(50))).c_str(),
                  formatDurationNs(static_cast<double>(h.valueAtPercentile(90))).c_str(),
                  formatDurationNs(static_cast<double>(h.valueAtPercentile(99))).c_str(),
                  formatDurationNs(static_cast<double>(h.valueAtPercentile(99.9))).c_str(),
                  formatDurationNs(static_cast<double>(h.max())).c_str());
}

// Latency per kind of request, when the plan mixes kinds (the taxi mix).
std::string kindRows(const StageResult &stage)
{
    const auto &kinds = stage.totals.kinds();
    std::string out;
    for (std::size_t i = 0; i < kinds.size() && i < stage.kindNames.size(); ++i) {
        const WorkerStats::KindStats &kind = kinds[i];
        if (kind.responses + kind.errors == 0)
            continue;
        if (out.empty())
            out = format("  By request %14s %9s %9s %9s %9s\n", "responses", "errors", "p50", "p99", "max");
        out += format("    %-16s %10llu %9llu %9s %9s %9s\n", stage.kindNames[i].c_str(),
                      static_cast<unsigned long long>(kind.responses), static_cast<unsigned long long>(kind.errors),
                      formatDurationNs(static_cast<double>(kind.latency.valueAtPercentile(50))).c_str(),
                      formatDurationNs(static_cast<double>(kind.latency.valueAtPercentile(99))).c_str(),
                      formatDurationNs(static_cast<double>(kind.latency.max())).c_str());
    }
    return out;
}

} // namespace

std::string formatDurationNs(double ns)
{
    if (ns < 1e3)
        return format("%.0fns", ns);
    if (ns < 1e6)
        return format("%.2fus", ns / 1e3);
    if (ns < 1e9)
        return format("%.2fms", ns / 1e6);
    return format("%.2fs", ns / 1e9);
}

std::string formatBytes(double bytes)
{
    if (bytes < 1024)
        return format("%.0fB", bytes);
    if (bytes < 1024 * 1024)
        return format("%.2fKB", bytes / 1024);
    if (bytes < 1024.0 * 1024 * 1024)
        return format("%.2fMB", bytes / (1024 * 1024));
    return format("%.2fGB", bytes / (1024.0 * 1024 * 1024));
}

std::string runHeaderText(const RunResult &run)
{
    std::string out = "taxicore-bench @ " + run.url + "\n";
    if (!run.scenarioName.empty())
        out += "  scenario " + run.scenarioName + ": " + run.scenarioDescription + "\n  source: " + run.scenarioSource
               + "\n";
    return out;
}

std::string stageSummaryText(const StageResult &stage)
{
    const LoadSettings &s = stage.settings;
    const WorkerStats &t = stage.totals;
    std::string out;
    out += format("Stage %s: %.2fs, %d thread(s) and %d connections, %s, %s, timeout %s\n", stage.name.c_str(),
                  stage.elapsedSeconds, stage.threads, s.connections,
                  s.openLoop() ? format("open loop at %.0f req/s", s.rate).c_str() : "closed loop",
                  httpModeName(s.httpMode).c_str(), formatDurationNs(static_cast<double>(s.timeout.count())).c_str());
    out += "  requests: " + stage.requests + "\n";
    out += format("  Latency %16s %9s %9s %9s %9s %9s %9s\n", "mean", "stdev", "p50", "p90", "p99", "p99.9", "max");
    if (s.openLoop()) {
        out += latencyRow("corrected", t.corrected);
        out += latencyRow("uncorrected", t.uncorrected);
        out += latencyRow("send lag", t.scheduleLag);
    } else {
        out += latencyRow("", t.uncorrected);
    }
    out += kindRows(stage);
    out += format("  %llu requests in %.2fs, %s read\n", static_cast<unsigned long long>(stage.responses()),
                  stage.elapsedSeconds, formatBytes(static_cast<double>(t.value(WorkerStats::BytesRead))).c_str());
    if (t.value(WorkerStats::HttpErrors) > 0) {
        std::string byStatus;
        for (const auto &[status, count] : stage.errorStatuses)
            byStatus +=
                format("%s%d: %llu", byStatus.empty() ? "" : ", ", status, static_cast<unsigned long long>(count));
        out += format("  Non-2xx responses: %llu (%s)\n",
                      static_cast<unsigned long long>(t.value(WorkerStats::HttpErrors)), byStatus.c_str());
    }
    const uint64_t socketErrors = t.value(WorkerStats::ConnectErrors) + t.value(WorkerStats::ReadErrors)
                                  + t.value(WorkerStats::WriteErrors) + t.value(WorkerStats::Timeouts);
    if (socketErrors > 0)
        out += format("  Socket errors: connect %llu, read %llu, write %llu, timeout %llu\n",
                      static_cast<unsigned long long>(t.value(WorkerStats::ConnectErrors)),
                      static_cast<unsigned long long>(t.value(WorkerStats::ReadErrors)),
                      static_cast<unsigned long long>(t.value(WorkerStats::WriteErrors)),
                      static_cast<unsigned long long>(t.value(WorkerStats::Timeouts)));
    if (t.value(WorkerStats::NoCarAvailable) + t.value(WorkerStats::Conflicts) > 0)
        out += format("  Expected refusals: no car available (409) %llu, booking transition "
                      "conflicts (409) %llu\n",
                      static_cast<unsigned long long>(t.value(WorkerStats::NoCarAvailable)),
                      static_cast<unsigned long long>(t.value(WorkerStats::Conflicts)));
    if (const uint64_t unfinished = t.value(WorkerStats::UnfinishedAtEnd))
        out += format("  %llu requests still waiting for a response when the time was up (not counted)\n",
                      static_cast<unsigned long long>(unfinished));
    out += format("Requests/sec: %10.2f\n", stage.requestsPerSecond());
    out += format("Transfer/sec: %10s\n",
                  formatBytes(stage.elapsedSeconds > 0
                                  ? static_cast<double>(t.value(WorkerStats::BytesRead)) / stage.elapsedSeconds
                                  : 0)
                      .c_str());
    const ClientUsage &c = stage.client;
    out += format("Client: %.0f%% CPU of %d thread(s), %.2fus CPU/request; %s\n", c.cpuPercentOfThreads, c.threads,
                  c.cpuMicrosPerRequest,
                  c.clientBound ? ("CLIENT-BOUND: " + c.clientBoundReason).c_str() : "not client-bound");
    return out;
}

} // namespace taxicore::bench
