// report.md of the comparison suite: the machine and the run's conditions, issue 3's target
// checks computed from the numbers, TaxiCore beside the Node.js peers (PeerComparison.h), then a
// table per scenario stage and the memory table.
#pragma once

#include "SuiteResults.h"

#include <QMap>

namespace taxicore::bench::suite {

struct TargetCheck {
    QString target;  // "processes/single req/s on /fib?n=25 at c=64 ≥ 1.8"
    QString subject; // the configuration checked
    QString figures; // "1.93× (812 vs 421 req/s)"
    bool pass = false;
    bool measured = true; // false: the numbers needed are missing (reported as n/a)
};

// The targets of issue 3 ("Benchmarks (not tests)") computed from the rows.
QList<TargetCheck> targetChecks(const QList<ResultRow> &rows);

// meta: started_at, finished_at, load_start, load_end, quick, cores, duration_s, peers_note.
QString reportMarkdown(const QList<ResultRow> &rows, const QMap<QString, QString> &meta, const QStringList &warnings);

QMap<QString, QString> readMeta(const QString &path);

} // namespace taxicore::bench::suite
