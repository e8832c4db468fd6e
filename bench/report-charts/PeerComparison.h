// TaxiCore against the Node.js peers of one suite run: each peer stage beside the TaxiCore
// configuration built on the same model (one process: single; a cluster: processes).
#pragma once

#include "SuiteResults.h"

namespace taxicore::bench::suite {

struct PeerComparison {
    QString scenario;
    QString stage;
    QString peer;     // node-http, express, express-cluster-2
    QString taxicore; // single, processes:round-robin
    double taxicoreRps = 0;
    double peerRps = 0;
    double taxicoreP99Ms = 0;
    double peerP99Ms = 0;
    double taxicoreCpuUs = -1; // < 0: not measured
    double peerCpuUs = -1;

    double rpsRatio() const { return peerRps > 0 ? taxicoreRps / peerRps : 0; }
    // Peer CPU per request over TaxiCore's: > 1 means TaxiCore spends less; 0 when either is unknown.
    double cpuAdvantage() const { return taxicoreCpuUs > 0 && peerCpuUs > 0 ? peerCpuUs / taxicoreCpuUs : 0; }
    // Ahead: at least the peer's throughput (a peer that answered nothing in the stage, as Express
    // on autocannon-fib40, is behind any TaxiCore that answered), and no more CPU per request where
    // both were measured.
    bool ahead() const
    {
        return taxicoreRps > 0 && taxicoreRps >= peerRps && (cpuAdvantage() == 0 || cpuAdvantage() >= 1.0);
    }
};

// The TaxiCore configuration a peer is compared with: a one-process peer with `single`, a cluster
// (name containing "cluster") with `processes:round-robin`, else the first processes
// configuration; empty when the run has none.
QString counterpartOf(const QString &peer, const QStringList &taxicoreConfigurations);

// One entry per peer stage that has a TaxiCore counterpart stage in the same run.
QList<PeerComparison> peerComparisons(const QList<ResultRow> &rows);

} // namespace taxicore::bench::suite
