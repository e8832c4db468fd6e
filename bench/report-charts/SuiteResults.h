// The comparison suite's results: one row per configuration × scenario stage, read from the
// suite's run manifest (taxicore-bench JSON + server CPU samples) or from results.csv.
#pragma once

#include <QList>
#include <QMap>
#include <QString>
#include <QStringList>

namespace taxicore::bench::suite {

struct ResultRow {
    QString configuration; // single, pool, processes:round-robin, express-cluster-2, ...
    QString kind;          // taxicore | node
    QString scenario;      // ab-hello, loadtest-fib25, ...
    QString stage;         // c64, c100, ...
    QString requests;      // "GET /fib?n=25"
    int connections = 0;
    qint64 completed = 0; // responses
    qint64 errors = 0;
    qint64 timeouts = 0;
    qint64 unfinished = 0;
    double requestsPerSecond = 0;
    double meanMs = 0;
    double p50Ms = 0;
    double p90Ms = 0;
    double p95Ms = 0;
    double p99Ms = 0;
    double maxMs = 0;
    double serverCpuUsPerRequest = -1; // < 0: not measured
    bool clientBound = false;
    double primaryRssMb = 0;
    double workerRssMaxMb = 0; // 0 when the server has no workers
    int workers = 0;

    QString stageKey() const { return scenario + QLatin1Char('/') + stage; }
};

// Column names of results.csv, in order.
QStringList csvHeader();
QString toCsv(const QList<ResultRow> &rows);
// Reads results.csv (quoted fields allowed); error set and empty list on a bad file.
QList<ResultRow> fromCsv(const QString &text, QString &error);

// Reads the suite's manifest (TSV: configuration, kind, scenario, json path, cpu log path,
// primary RSS kB, max worker RSS kB, workers, taxicore-bench exit status; paths relative to the
// manifest's parent directory's parent, i.e. the output directory).
QList<ResultRow> fromManifest(const QString &manifestPath, QStringList &warnings);

// Server CPU per stage from the suite's sample log ("stage NS" at a stage's start, "progress NS"
// each second and at its end): ns of CPU per stage, -1 where unknown.
QList<double> stageCpuNs(const QString &cpuLog);

// The row of one configuration's scenario stage, or nullptr.
const ResultRow *findRow(const QList<ResultRow> &rows, const QString &configuration, const QString &scenario,
                         const QString &stage);

// Distinct values in first-seen order.
QStringList configurations(const QList<ResultRow> &rows);
QStringList stageKeys(const QList<ResultRow> &rows);

} // namespace taxicore::bench::suite
