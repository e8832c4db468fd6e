#pragma once

namespace taxicore {

struct ProcessStats {
    double cpuPercent = 0; // of one core, since the previous sample of this pid (or start)
    long rssKb = 0;
};

// Reads /proc/<pid>: CPU use since this process last sampled that pid, and resident memory.
ProcessStats sampleProcess(int pid);

} // namespace taxicore
