#include "LoadSettings.h"

#include <algorithm>
#include <thread>

namespace taxicore::bench {

std::string httpModeName(HttpMode mode)
{
    switch (mode) {
    case HttpMode::KeepAlive:
        return "keep-alive";
    case HttpMode::ConnectionPerRequest:
        return "connection-per-request";
    case HttpMode::Http10:
        return "http1.0";
    }
    return "unknown";
}

int defaultThreadCount()
{
    const int cores = static_cast<int>(std::thread::hardware_concurrency());
    return std::max(1, cores / 2);
}

int LoadSettings::effectiveThreads() const
{
    const int wanted = threads > 0 ? threads : defaultThreadCount();
    return std::clamp(wanted, 1, std::max(1, connections));
}

} // namespace taxicore::bench
