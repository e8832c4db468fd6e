// LD_PRELOAD shim for hostile_clock_step_test: steps the wall clock (CLOCK_REALTIME, gettimeofday, time)
// forward while leaving CLOCK_MONOTONIC alone, as NTP or an operator setting the date would.
//
// TAXICORE_TEST_CLOCK_STEP_FILE  the steps begin once this file exists (checked at most every
//                                kTriggerPollMs of monotonic time, so a clock read stays cheap)
// TAXICORE_TEST_CLOCK_STEP_MS    how far each step moves the wall clock (default 10000)
// TAXICORE_TEST_CLOCK_STEPS      how many steps (default 1), kStepGapMs apart
//
// Each process sees the file on its own, within kTriggerPollMs of the others: steps land between
// the heartbeats one process writes and the other reads, as a real step does.

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <ctime>
#include <dlfcn.h>
#include <sys/time.h>
#include <unistd.h>

namespace {

constexpr long long kTriggerPollMs = 20;
constexpr long long kStepGapMs = 600;

using ClockGettime = int (*)(clockid_t, timespec *);
using GetTimeOfDay = int (*)(timeval *, void *);

ClockGettime realClockGettime()
{
    static const auto fn = reinterpret_cast<ClockGettime>(dlsym(RTLD_NEXT, "clock_gettime"));
    return fn;
}

long long monotonicMs()
{
    timespec now{};
    realClockGettime()(CLOCK_MONOTONIC, &now);
    return now.tv_sec * 1000LL + now.tv_nsec / 1'000'000;
}

long long envNumber(const char *name, long long fallback)
{
    const char *value = std::getenv(name);
    return value && *value ? std::atoll(value) : fallback;
}

std::atomic<long long> g_triggeredAtMs{-1};
std::atomic<long long> g_lastPollMs{-1'000'000};

// Milliseconds to add to every wall-clock reading now.
long long offsetMs()
{
    const char *file = std::getenv("TAXICORE_TEST_CLOCK_STEP_FILE");
    if (!file)
        return 0;
    const long long now = monotonicMs();
    long long triggered = g_triggeredAtMs.load(std::memory_order_relaxed);
    if (triggered < 0) {
        if (now - g_lastPollMs.load(std::memory_order_relaxed) < kTriggerPollMs)
            return 0;
        g_lastPollMs.store(now, std::memory_order_relaxed);
        if (::access(file, F_OK) != 0)
            return 0;
        long long expected = -1;
        g_triggeredAtMs.compare_exchange_strong(expected, now);
        triggered = g_triggeredAtMs.load(std::memory_order_relaxed);
    }
    const long long steps = envNumber("TAXICORE_TEST_CLOCK_STEPS", 1);
    const long long done = std::min(steps, (now - triggered) / kStepGapMs + 1);
    return done * envNumber("TAXICORE_TEST_CLOCK_STEP_MS", 10'000);
}

void shift(timespec *ts, long long ms)
{
    ts->tv_sec += time_t(ms / 1000);
    ts->tv_nsec += long(ms % 1000) * 1'000'000L;
    if (ts->tv_nsec >= 1'000'000'000L) {
        ts->tv_nsec -= 1'000'000'000L;
        ++ts->tv_sec;
    }
}

} // namespace

extern "C" {

// noexcept: glibc declares these __THROW, and a definition must match its declaration.
int clock_gettime(clockid_t clock, timespec *ts) noexcept
{
    const int result = realClockGettime()(clock, ts);
    if (result == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE))
        shift(ts, offsetMs());
    return result;
}

int gettimeofday(timeval *tv, void *tz) noexcept
{
    static const auto real = reinterpret_cast<GetTimeOfDay>(dlsym(RTLD_NEXT, "gettimeofday"));
    const int result = real(tv, tz);
    if (result == 0) {
        timespec ts{tv->tv_sec, tv->tv_usec * 1000L};
        shift(&ts, offsetMs());
        tv->tv_sec = ts.tv_sec;
        tv->tv_usec = ts.tv_nsec / 1000L;
    }
    return result;
}

time_t time(time_t *out) noexcept
{
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out)
        *out = ts.tv_sec;
    return ts.tv_sec;
}

} // extern "C"
