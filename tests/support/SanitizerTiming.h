#pragma once

// How many times slower the code runs in the `asan` build (make test-asan: Debug, ASan + UBSan,
// the whole suite two at a time) than in the normal one. Only for what a test bounds by the time
// the code takes (a process starting, a schedule it must keep up with), never for what the code
// must do: the behaviour asserted is the same in both builds, only the clock is scaled.

namespace taxicore::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr int kSanitizerSlowdown = 2;
#else
inline constexpr int kSanitizerSlowdown = 1;
#endif

} // namespace taxicore::test
