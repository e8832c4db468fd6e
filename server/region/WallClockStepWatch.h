#pragma once

#include <cstdint>

namespace taxicore::clock {

// Notices that the wall clock was set (stepped) rather than just ticking: the distance between the
// wall clock and CLOCK_MONOTONIC moved by more than kStepMs since the last look. NTP's slewing
// moves it by at most 0.5 ms a second, far below kStepMs between two looks a second apart.
class WallClockStepWatch {
public:
    static constexpr int64_t kStepMs = 1000;

    // True once after each step (of either sign) since the previous call; the first call only
    // takes the clocks' distance.
    bool stepped();
    // Compares against `wallMs` and `monotonicMs` (tests give them; stepped() reads the clocks).
    bool stepped(int64_t wallMs, int64_t monotonicMs);

private:
    bool m_started = false;
    int64_t m_wallAheadMs = 0; // wall − monotonic at the last look
};

} // namespace taxicore::clock
