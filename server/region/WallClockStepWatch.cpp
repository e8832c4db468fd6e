#include "region/WallClockStepWatch.h"

#include "region/Clock.h"

#include <cstdlib>

namespace taxicore::clock {

bool WallClockStepWatch::stepped()
{
    return stepped(wallMs(), monotonicMs());
}

bool WallClockStepWatch::stepped(int64_t wallMs, int64_t monotonicMs)
{
    const int64_t wallAheadMs = wallMs - monotonicMs;
    const bool first = !m_started;
    m_started = true;
    // Against the last look, not the first: a slew that adds up over hours is no step.
    const bool moved = std::llabs(wallAheadMs - m_wallAheadMs) > kStepMs;
    m_wallAheadMs = wallAheadMs;
    return !first && moved;
}

} // namespace taxicore::clock
