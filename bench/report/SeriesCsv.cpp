#include "SeriesCsv.h"

#include <cstdio>

namespace taxicore::bench {

std::string seriesCsv(const RunResult &run)
{
    std::string csv = "stage,second,elapsed_s,responses,requests_per_s,errors,p99_ms,client_cpu_percent\n";
    for (const StageResult &stage : run.stages) {
        for (const SecondSample &s : stage.series) {
            char row[256];
            std::snprintf(row, sizeof row, "%s,%d,%.3f,%llu,%.2f,%llu,%.3f,%.1f\n", stage.name.c_str(), s.second,
                          s.elapsedSeconds, static_cast<unsigned long long>(s.responses), s.requestsPerSecond,
                          static_cast<unsigned long long>(s.errors), s.p99Ms, s.clientCpuPercent);
            csv += row;
        }
    }
    return csv;
}

} // namespace taxicore::bench
