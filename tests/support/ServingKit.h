#pragma once

// A server started and serving in its mode, and latency percentiles (slowloris, C10K, the hostile
// framing and memory tests). Include after <QTest>.

#include "RuntimeKit.h" // waitForWorkersTakingConnections, over the admin API

#include <algorithm>
#include <vector>

namespace taxicore::test {

// Starts `server`. Until its workers take connections, a processes-mode server serves in-process
// and then drains those connections (Connection: close), so this waits until both workers serve.
inline bool startServing(ServerProcess &server, const QString &mode, QString &error)
{
    if (!server.start()) {
        error = server.error();
        return false;
    }
    if (mode == QStringLiteral("processes") && !rt::waitForWorkersTakingConnections(server, 2, 15'000)) {
        error = QStringLiteral("the workers did not start: ") + rt::describeEvents(server);
        return false;
    }
    return true;
}

// The p-th percentile (0..1) of `values` by nearest rank; -1 when there are none.
inline qint64 percentile(std::vector<qint64> values, double p)
{
    if (values.empty())
        return -1;
    std::sort(values.begin(), values.end());
    return values[std::min(values.size() - 1, size_t(p * double(values.size())))];
}

} // namespace taxicore::test
