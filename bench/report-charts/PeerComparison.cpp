#include "PeerComparison.h"

namespace taxicore::bench::suite {

QString counterpartOf(const QString &peer, const QStringList &taxicoreConfigurations)
{
    if (!peer.contains(QLatin1String("cluster")))
        return taxicoreConfigurations.contains(QLatin1String("single")) ? QStringLiteral("single") : QString();
    const QString preferred = QStringLiteral("processes:round-robin"); // the default policy
    if (taxicoreConfigurations.contains(preferred))
        return preferred;
    for (const QString &c : taxicoreConfigurations) {
        if (c.startsWith(QLatin1String("processes")))
            return c;
    }
    return {};
}

QList<PeerComparison> peerComparisons(const QList<ResultRow> &rows)
{
    QStringList ours;
    for (const ResultRow &r : rows) {
        if (r.kind == QLatin1String("taxicore") && !ours.contains(r.configuration))
            ours << r.configuration;
    }
    QList<PeerComparison> result;
    for (const ResultRow &peer : rows) {
        if (peer.kind == QLatin1String("taxicore"))
            continue;
        const QString counterpart = counterpartOf(peer.configuration, ours);
        const ResultRow *mine = counterpart.isEmpty() ? nullptr : findRow(rows, counterpart, peer.scenario, peer.stage);
        if (!mine)
            continue;
        PeerComparison c;
        c.scenario = peer.scenario;
        c.stage = peer.stage;
        c.peer = peer.configuration;
        c.taxicore = counterpart;
        c.taxicoreRps = mine->requestsPerSecond;
        c.peerRps = peer.requestsPerSecond;
        c.taxicoreP99Ms = mine->p99Ms;
        c.peerP99Ms = peer.p99Ms;
        c.taxicoreCpuUs = mine->serverCpuUsPerRequest;
        c.peerCpuUs = peer.serverCpuUsPerRequest;
        result << c;
    }
    return result;
}

} // namespace taxicore::bench::suite
