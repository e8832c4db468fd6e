#include "SuiteReport.h"

#include "PeerComparison.h"

#include <QFile>
#include <QSysInfo>
#include <QTextStream>

#include <algorithm>
#include <optional>

namespace taxicore::bench::suite {

namespace {

QString fixed(double value, int decimals)
{
    return QString::number(value, 'f', decimals);
}

QString ms(double value)
{
    return value >= 100 ? fixed(value, 0) : value >= 10 ? fixed(value, 1) : fixed(value, 2);
}

QString cpuModel()
{
    QFile file(QStringLiteral("/proc/cpuinfo"));
    if (file.open(QIODevice::ReadOnly)) { // a /proc file has no size: read it whole, not through atEnd()
        const QList<QByteArray> lines = file.readAll().split('\n');
        for (const QByteArray &line : lines) {
            if (line.startsWith("model name"))
                return QString::fromUtf8(line.mid(line.indexOf(':') + 1)).trimmed();
        }
    }
    return QStringLiteral("unknown CPU");
}

QStringList processesConfigurations(const QList<ResultRow> &rows)
{
    QStringList result;
    for (const QString &c : configurations(rows)) {
        if (c.startsWith(QLatin1String("processes")))
            result << c;
    }
    return result;
}

QString cpuCell(double us)
{
    return us > 0 ? fixed(us, 1) : QStringLiteral("–");
}

QString ratioCell(double ratio)
{
    return ratio > 0 ? fixed(ratio, 2) + QStringLiteral("×") : QStringLiteral("–");
}

// Issue 18's "ahead of Node http and Express on every seed workload", one row per peer stage.
void writePeerComparisons(QTextStream &out, const QList<PeerComparison> &comparisons)
{
    if (comparisons.isEmpty())
        return;
    qsizetype ahead = 0;
    for (const PeerComparison &c : comparisons)
        ahead += c.ahead() ? 1 : 0;
    out << "\n## TaxiCore against the Node.js peers\n\n";
    out << "TaxiCore is **ahead on " << ahead << " of " << comparisons.size()
        << "** peer workloads (ahead: at least the peer's req/s and, where both were measured, no more server "
           "CPU per request). A one-process peer is compared with `single`, a cluster with `processes`; "
           "ratios are TaxiCore's req/s over the peer's and the peer's CPU per request over TaxiCore's "
           "(above 1: TaxiCore better).\n\n";
    out << "| workload | peer | TaxiCore | req/s TaxiCore / peer | req/s ratio | p99 ms TaxiCore / peer | CPU µs/req "
           "TaxiCore / peer | CPU advantage | ahead |\n|---|---|---|---|---|---|---|---|---|\n";
    for (const PeerComparison &c : comparisons) {
        out << "| " << c.scenario << " " << c.stage << " | " << c.peer << " | " << c.taxicore << " | "
            << fixed(c.taxicoreRps, 1) << " / " << fixed(c.peerRps, 1) << " | "
            << (c.peerRps > 0 ? ratioCell(c.rpsRatio()) : QStringLiteral("peer answered none")) << " | "
            << ms(c.taxicoreP99Ms) << " / " << ms(c.peerP99Ms) << " | " << cpuCell(c.taxicoreCpuUs) << " / "
            << cpuCell(c.peerCpuUs) << " | " << ratioCell(c.cpuAdvantage()) << " | " << (c.ahead() ? "yes" : "**no**")
            << " |\n";
    }
}

} // namespace

QList<TargetCheck> targetChecks(const QList<ResultRow> &rows)
{
    QList<TargetCheck> checks;
    const QString fib = QStringLiteral("loadtest-fib25");
    const ResultRow *singleFib = findRow(rows, QStringLiteral("single"), fib, QStringLiteral("c64"));
    for (const QString &config : processesConfigurations(rows)) {
        TargetCheck check{QStringLiteral("processes/single req/s on /fib?n=25 at c=64 ≥ 1.8"), config, {}, false, true};
        const ResultRow *p = findRow(rows, config, fib, QStringLiteral("c64"));
        if (!p || !singleFib || singleFib->requestsPerSecond <= 0) {
            check.measured = false;
            check.figures = QStringLiteral("not measured");
        } else {
            const double ratio = p->requestsPerSecond / singleFib->requestsPerSecond;
            check.pass = ratio >= 1.8;
            check.figures =
                QStringLiteral("%1× (%2 vs single %3 req/s)")
                    .arg(fixed(ratio, 2), fixed(p->requestsPerSecond, 0), fixed(singleFib->requestsPerSecond, 0));
        }
        checks << check;
    }
    for (const QString &config : configurations(rows)) {
        const ResultRow *r = findRow(rows, config, fib, QStringLiteral("c1000"));
        if (!r || r->kind != QLatin1String("taxicore"))
            continue;
        TargetCheck check{QStringLiteral("/fib?n=25 at c=1000: p99 ≤ 1.5× p50, no timeouts"), config, {}, false, true};
        if (r->completed == 0) {
            check.figures = QStringLiteral("no completed response (%1 timeouts)").arg(r->timeouts);
        } else {
            const double ratio = r->p99Ms / std::max(r->p50Ms, 1e-9);
            check.pass = ratio <= 1.5 && r->timeouts == 0;
            check.figures = QStringLiteral("p99 %1 ms = %2× p50 %3 ms; %4 timeouts")
                                .arg(ms(r->p99Ms), fixed(ratio, 2), ms(r->p50Ms))
                                .arg(r->timeouts);
        }
        checks << check;
    }
    const ResultRow *singleHello =
        findRow(rows, QStringLiteral("single"), QStringLiteral("hello-c64"), QStringLiteral("c64"));
    for (const QString &config : processesConfigurations(rows)) {
        TargetCheck check{
            QStringLiteral("/hello (keep-alive, c=64) CPU/request ≤ 1.3× single"), config, {}, false, true};
        const ResultRow *p = findRow(rows, config, QStringLiteral("hello-c64"), QStringLiteral("c64"));
        if (!p || !singleHello || p->serverCpuUsPerRequest <= 0 || singleHello->serverCpuUsPerRequest <= 0) {
            check.measured = false;
            check.figures = QStringLiteral("not measured");
        } else {
            const double ratio = p->serverCpuUsPerRequest / singleHello->serverCpuUsPerRequest;
            check.pass = ratio <= 1.3;
            check.figures = QStringLiteral("%1× (%2 vs single %3 µs/request)")
                                .arg(fixed(ratio, 2), fixed(p->serverCpuUsPerRequest, 1),
                                     fixed(singleHello->serverCpuUsPerRequest, 1));
        }
        checks << check;
    }
    for (const QString &config : processesConfigurations(rows)) {
        TargetCheck check{QStringLiteral("worker RSS ≤ 40 MB (bundled city loaded)"), config, {}, false, true};
        double worst = 0;
        double primary = 0;
        int workers = 0;
        for (const ResultRow &r : rows) {
            if (r.configuration == config) {
                worst = std::max(worst, r.workerRssMaxMb);
                primary = std::max(primary, r.primaryRssMb);
                workers = std::max(workers, r.workers);
            }
        }
        if (workers == 0) {
            check.measured = false;
            check.figures = QStringLiteral("no worker seen");
        } else {
            check.pass = worst <= 40.0;
            check.figures = QStringLiteral("largest worker %1 MB (%2 workers; primary %3 MB)")
                                .arg(fixed(worst, 1))
                                .arg(workers)
                                .arg(fixed(primary, 1));
        }
        checks << check;
    }
    return checks;
}

QString reportMarkdown(const QList<ResultRow> &rows, const QMap<QString, QString> &meta, const QStringList &warnings)
{
    QString md;
    QTextStream out(&md);
    const bool quick = meta.value(QStringLiteral("quick")) == QLatin1String("1");
    out << "# TaxiCore comparison suite (`make bench`)\n\n";
    out << "- **Date**: " << meta.value(QStringLiteral("started_at"), QStringLiteral("?")) << " → "
        << meta.value(QStringLiteral("finished_at"), QStringLiteral("?")) << " ("
        << meta.value(QStringLiteral("duration_s"), QStringLiteral("?")) << " s"
        << (quick ? ", **BENCH_QUICK=1**: 2 s stages, cluster-cpu 40 requests, autocannon-fib40 5 s"
                  : ", full durations")
        << ")\n";
    out << "- **Machine**: " << meta.value(QStringLiteral("cores"), QStringLiteral("?")) << " cores, " << cpuModel()
        << ", " << QSysInfo::kernelType() << ' ' << QSysInfo::kernelVersion() << ", " << QSysInfo::prettyProductName()
        << "\n";
    out << "- **Load average** (1/5/15 min) at start " << meta.value(QStringLiteral("load_start"), QStringLiteral("?"))
        << ", at end " << meta.value(QStringLiteral("load_end"), QStringLiteral("?"))
        << ". The client (taxicore-bench) runs on the same cores as the server, and the machine may be "
           "shared: numbers are noisy (±15 % or more between runs); compare configurations within one run.\n";
    out << "- **Servers**: `taxicore-server --port 0 --mode M --policy P --workers N --threads N` (N = cores), "
           "started once per configuration; the scenarios run one after the other against it "
           "(autocannon-fib40 last).\n";
    out << "- **Peers**: " << meta.value(QStringLiteral("peers_note"), QStringLiteral("not run")) << "\n";
    out << "- **Server CPU µs/request**: CPU time of every thread of the server process and its children "
           "(utime + stime of `/proc/PID/stat`, 10 ms ticks per process) from the stage's start to its last "
           "per-second sample ÷ completed responses; short stages (ab-hello, BENCH_QUICK) are coarse.\n";
    out << "- **hello-c64** is issue 3's wrk-like measurement (keep-alive `GET /hello`, 64 connections); the "
           "others are taxicore-bench's seed scenarios. Latencies are the corrected distribution in ms.\n";
    if (quick)
        out << "- **Quick run**: a 2 s stage at c=1000 is shorter than one round of its requests, so its p99/p50 "
               "check is indicative only, and autocannon-fib40 (5 s) may see no response; run the full suite "
               "for the figures to quote.\n";
    for (const QString &w : warnings)
        out << "> warning: " << w << "\n";
    out << "\n";

    out << "## Targets of issue 3\n\n| target | configuration | result | figures |\n|---|---|---|---|\n";
    for (const TargetCheck &c : targetChecks(rows)) {
        out << "| " << c.target << " | " << c.subject << " | "
            << (c.measured ? (c.pass ? "**PASS**" : "**MISS**") : "n/a") << " | " << c.figures << " |\n";
    }
    writePeerComparisons(out, peerComparisons(rows));
    out << "\n![req/s](requests-per-second.png)\n\n![latency](latency.png)\n\n";

    for (const QString &key : stageKeys(rows)) {
        const ResultRow *first = nullptr;
        for (const ResultRow &r : rows) {
            if (r.stageKey() == key) {
                first = &r;
                break;
            }
        }
        out << "## " << first->scenario << " — " << first->stage << " (" << first->requests << ")\n\n";
        out << "| configuration | concurrency | completed | p50 | p90 | p95 | p99 | max | req/s | mean | timeouts | "
               "errors | unfinished | server CPU µs/req | client-bound |\n";
        out << "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n";
        for (const ResultRow &r : rows) {
            if (r.stageKey() != key)
                continue;
            out << "| " << r.configuration << " | " << r.connections << " | " << r.completed << " | " << ms(r.p50Ms)
                << " | " << ms(r.p90Ms) << " | " << ms(r.p95Ms) << " | " << ms(r.p99Ms) << " | " << ms(r.maxMs) << " | "
                << fixed(r.requestsPerSecond, r.requestsPerSecond >= 100 ? 0 : 1) << " | " << ms(r.meanMs) << " | "
                << r.timeouts << " | " << r.errors << " | " << r.unfinished << " | "
                << (r.serverCpuUsPerRequest < 0 ? QStringLiteral("n/a") : fixed(r.serverCpuUsPerRequest, 1)) << " | "
                << (r.clientBound ? "**yes**" : "no") << " |\n";
        }
        out << "\n";
    }

    out << "## Memory (RSS after each scenario, largest seen)\n\n| configuration | primary MB | largest worker MB "
           "| workers |\n|---|---|---|---|\n";
    for (const QString &config : configurations(rows)) {
        double primary = 0;
        double worker = 0;
        int workers = 0;
        for (const ResultRow &r : rows) {
            if (r.configuration == config) {
                primary = std::max(primary, r.primaryRssMb);
                worker = std::max(worker, r.workerRssMaxMb);
                workers = std::max(workers, r.workers);
            }
        }
        out << "| " << config << " | " << fixed(primary, 1) << " | "
            << (workers ? fixed(worker, 1) : QStringLiteral("—")) << " | " << workers << " |\n";
    }
    out << "\nRaw results: `results.csv` (one row per configuration × scenario stage) and `runs/` (taxicore-bench "
           "JSON and summaries, CPU samples, server logs).\n";
    return md;
}

QMap<QString, QString> readMeta(const QString &path)
{
    QMap<QString, QString> meta;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly | QIODevice::Text))
        return meta;
    QTextStream in(&file);
    while (!in.atEnd()) {
        const QString line = in.readLine();
        const qsizetype eq = line.indexOf(QLatin1Char('='));
        if (eq > 0)
            meta.insert(line.left(eq), line.mid(eq + 1));
    }
    return meta;
}

} // namespace taxicore::bench::suite
