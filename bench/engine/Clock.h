#pragma once

#include <cstdint>
#include <ctime>

namespace taxicore::bench {

inline constexpr int64_t kNanosPerSecond = 1'000'000'000;

// CLOCK_MONOTONIC in nanoseconds: every time stamp of a run, on every thread, uses this clock.
inline int64_t monotonicNowNs()
{
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return int64_t{now.tv_sec} * kNanosPerSecond + now.tv_nsec;
}

// CPU time (user + system) of the calling thread.
inline int64_t threadCpuNowNs()
{
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return int64_t{now.tv_sec} * kNanosPerSecond + now.tv_nsec;
}

} // namespace taxicore::bench
