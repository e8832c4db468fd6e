#pragma once

#include <cstdint>

namespace taxicore::clock {

// Wall-clock milliseconds since the epoch: only for instants that are shown or stored (bookings,
// events, car updates). It jumps when the clock is set.
int64_t wallMs();
// CLOCK_MONOTONIC milliseconds: for every duration, deadline and age (heartbeats, backoffs, rate
// buckets). The same clock in every process on the host, so values in the shared region compare
// across processes, and a clock step does not move it.
int64_t monotonicMs();

} // namespace taxicore::clock
