#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace taxicore::bench {

using Nanoseconds = std::chrono::nanoseconds;

// How requests use connections.
enum class HttpMode {
    KeepAlive,            // HTTP/1.1, one connection carries many requests (wrk, autocannon)
    ConnectionPerRequest, // HTTP/1.1 with "Connection: close" (siege, loadtest without -k)
    Http10,               // HTTP/1.0 without keep-alive (ab)
};

std::string httpModeName(HttpMode mode);

inline constexpr Nanoseconds kDefaultDuration = std::chrono::seconds(10);
inline constexpr Nanoseconds kDefaultRequestTimeout = std::chrono::seconds(10);
inline constexpr int kDefaultConnections = 64;

// One load stage: how much load, for how long, in which HTTP mode.
struct LoadSettings {
    int connections = kDefaultConnections;
    int threads = 0; // 0: chosen by defaultThreadCount()
    Nanoseconds duration = kDefaultDuration;
    uint64_t requestCount = 0; // > 0: stop after this many requests instead of after `duration`
    double rate = 0;           // > 0: open loop at this many requests/s; 0: closed loop
    HttpMode httpMode = HttpMode::KeepAlive;
    Nanoseconds timeout = kDefaultRequestTimeout;
    Nanoseconds warmup = Nanoseconds::zero();

    bool openLoop() const { return rate > 0; }
    bool countLimited() const { return requestCount > 0; }
    // Threads actually used: never more than connections.
    int effectiveThreads() const;
};

// Half the cores (the server under test usually shares the machine), at least one.
int defaultThreadCount();

} // namespace taxicore::bench
