#include "FileDescriptorLimit.h"

#include <sys/resource.h>

namespace taxicore::bench {

std::string ensureFileDescriptorsFor(int connections)
{
    const auto needed = static_cast<rlim_t>(connections) + kSpareFileDescriptors;
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= needed)
        return {};
    if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < needed)
        limit.rlim_cur = limit.rlim_max;
    else
        limit.rlim_cur = needed;
    setrlimit(RLIMIT_NOFILE, &limit);
    getrlimit(RLIMIT_NOFILE, &limit);
    if (limit.rlim_cur >= needed)
        return {};
    return std::to_string(connections) + " connections need " + std::to_string(needed)
           + " open files, but the limit is " + std::to_string(limit.rlim_cur) + " (raise it with ulimit -n)";
}

} // namespace taxicore::bench
