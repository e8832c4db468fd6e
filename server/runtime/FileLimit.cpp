#include "runtime/FileLimit.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/resource.h>

namespace taxicore {

namespace {
// Listening sockets, the ledger's SQLite files, worker channels and pipes, Qt's own descriptors.
constexpr long long kReservedDescriptors = 256;
} // namespace

FileLimit raiseFileLimit()
{
    FileLimit result;
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
        result.error = QStringLiteral("getrlimit: %1").arg(QString::fromLocal8Bit(std::strerror(errno)));
        return result;
    }
    if (limit.rlim_cur < limit.rlim_max) {
        rlimit wanted = limit;
        wanted.rlim_cur = limit.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &wanted) == 0) {
            limit = wanted;
            result.raised = true;
        } else {
            result.error = QStringLiteral("setrlimit: %1").arg(QString::fromLocal8Bit(std::strerror(errno)));
        }
    }
    const auto asNumber = [](rlim_t value) { return value == RLIM_INFINITY ? -1LL : static_cast<long long>(value); };
    result.soft = asNumber(limit.rlim_cur);
    result.hard = asNumber(limit.rlim_max);
    return result;
}

long long descriptorsNeeded(int maxConnections)
{
    return static_cast<long long>(maxConnections) + kReservedDescriptors;
}

FileLimit raiseFileLimitAndReport(const char *program, int maxConnections)
{
    const FileLimit limit = raiseFileLimit();
    if (!limit.error.isEmpty())
        std::fprintf(stderr, "%s: cannot raise the open-file limit (%s)\n", program, qPrintable(limit.error));
    std::fprintf(stderr, "%s: open-file limit %lld (hard %lld)%s\n", program, limit.soft, limit.hard,
                 limit.raised ? ", raised to the hard limit" : "");
    const long long needed = descriptorsNeeded(maxConnections);
    if (limit.soft >= 0 && limit.soft < needed)
        std::fprintf(stderr,
                     "%s: warning: --max-connections %d needs about %lld open files but the limit is %lld; "
                     "connections beyond it fail at accept (raise the hard limit: ulimit -Hn, LimitNOFILE=)\n",
                     program, maxConnections, needed, limit.soft);
    return limit;
}

} // namespace taxicore
