// Operational events recorded over HTTP (issue 8): POST /admin/v1/events stores an event in the
// server's ledger (read back from the SQLite file), answers 201 only after the commit, refuses
// bad input with 400/413 naming the problem; `taxicore-bench --record-to` records its own run
// (with the server's mode), in single and processes mode.

#include "ApiAssert.h"
#include "HttpClient.h"
#include "ServerProcess.h"
#include "ledger/LedgerReader.h"

#include <QDateTime>
#include <QJsonArray>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace taxicore;
using namespace taxicore::test;

namespace {
constexpr int kBenchTimeoutMs = 30000;

std::vector<EventRecord> eventsOfKind(const QString &dataDir, const QString &kind)
{
    LedgerOptions options;
    options.dataDir = dataDir;
    const auto all = LedgerReader(options).events(0, QDateTime::currentMSecsSinceEpoch() + 1);
    std::vector<EventRecord> found;
    for (const EventRecord &e : all.value) {
        if (e.kind == kind)
            found.push_back(e);
    }
    return found;
}

struct BenchRun {
    int exitCode = -1;
    QByteArray err;
};

BenchRun runBench(const QStringList &args)
{
    QProcess bench;
    bench.start(ServerProcess::binDir() + QStringLiteral("/taxicore-bench"), args);
    BenchRun run;
    if (!bench.waitForFinished(kBenchTimeoutMs)) {
        bench.kill();
        bench.waitForFinished();
        run.err = "taxicore-bench did not finish";
        return run;
    }
    run.exitCode = bench.exitStatus() == QProcess::NormalExit ? bench.exitCode() : -1;
    run.err = bench.readAllStandardError();
    return run;
}
} // namespace

class ServerEventsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void postedEventIsCommittedToTheLedger();
    void badEventsAreRefused();
    void benchRecordsItsRun_data();
    void benchRecordsItsRun();
    void benchSaysWhenItCannotRecord();
};

void ServerEventsTest::postedEventIsCommittedToTheLedger()
{
    QTemporaryDir dir;
    const QString data = dir.filePath(QStringLiteral("data"));
    ServerProcess server({QStringLiteral("--data-dir"), data, QStringLiteral("--cars"), QStringLiteral("10")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    HttpClient http(server.host(), server.port());

    const QJsonObject detail{{"url", "http://example/hello"},
                             {"requests_per_s", 4321.5},
                             {"note", "a,\"b\""},
                             {"stages", QJsonArray{QJsonObject{{"name", "c64"}}}}};
    const HttpResponse stored = http.postJson("/admin/v1/events", {{"kind", "benchmark"}, {"detail", detail}});
    TC_VERIFY_STATUS(stored, 201);
    QCOMPARE(stored.json().value("kind").toString(), QStringLiteral("benchmark"));
    QCOMPARE(stored.json().value("detail").toObject(), detail);
    const qint64 atMs = qint64(stored.json().value("at_ms").toDouble());
    QVERIFY(atMs > 0);

    // Acknowledged means committed: another connection to the file sees it at once.
    const auto events = eventsOfKind(data, QStringLiteral("benchmark"));
    QCOMPARE(events.size(), std::size_t(1));
    QCOMPARE(events.front().detail, detail);
    QCOMPARE(events.front().atMs, atMs);

    // A kind without detail is fine too.
    TC_VERIFY_STATUS(http.postJson("/admin/v1/events", {{"kind", "maintenance_note"}}), 201);
    QCOMPARE(eventsOfKind(data, QStringLiteral("maintenance_note")).size(), std::size_t(1));
    QCOMPARE(server.stop(), 0);
}

void ServerEventsTest::badEventsAreRefused()
{
    QTemporaryDir dir;
    const QString data = dir.filePath(QStringLiteral("data"));
    ServerProcess server({QStringLiteral("--data-dir"), data, QStringLiteral("--cars"), QStringLiteral("10")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    HttpClient http(server.host(), server.port());

    TC_VERIFY_ERROR(http.post("/admin/v1/events", {}), 400, "missing_body");
    TC_VERIFY_ERROR(http.post("/admin/v1/events", "{\"kind\":"), 400, "malformed_json");
    TC_VERIFY_ERROR(http.post("/admin/v1/events", "[1]"), 400, "malformed_json");
    TC_VERIFY_ERROR(http.postJson("/admin/v1/events", {{"detail", QJsonObject{}}}), 400, "bad_kind");
    TC_VERIFY_ERROR(http.postJson("/admin/v1/events", {{"kind", "Bench Mark"}}), 400, "bad_kind");
    TC_VERIFY_ERROR(http.postJson("/admin/v1/events", {{"kind", 7}}), 400, "bad_kind");
    TC_VERIFY_ERROR(http.postJson("/admin/v1/events", {{"kind", QString(33, QLatin1Char('a'))}}), 400, "bad_kind");
    TC_VERIFY_ERROR(http.postJson("/admin/v1/events", {{"kind", "benchmark"}, {"detail", "fast"}}), 400, "bad_detail");
    TC_VERIFY_ERROR(http.postJson("/admin/v1/events", {{"kind", "benchmark"}, {"detail", QJsonArray{1}}}), 400,
                    "bad_detail");
    TC_VERIFY_ERROR(
        http.postJson("/admin/v1/events",
                      {{"kind", "benchmark"}, {"detail", QJsonObject{{"x", QString(20000, QLatin1Char('x'))}}}}),
        413, "detail_too_large");
    // The route is the operator's: GET still lists the run's log, other methods are 405.
    TC_VERIFY_STATUS(http.get("/admin/v1/events"), 200);
    TC_VERIFY_STATUS(http.put("/admin/v1/events", "{}"), 405);

    QVERIFY(eventsOfKind(data, QStringLiteral("benchmark")).empty()); // nothing of the refused ones
    QCOMPARE(server.stop(), 0);
}

void ServerEventsTest::benchRecordsItsRun_data()
{
    QTest::addColumn<QString>("mode");
    QTest::newRow("single") << QStringLiteral("single");
    QTest::newRow("processes") << QStringLiteral("processes");
}

void ServerEventsTest::benchRecordsItsRun()
{
    QFETCH(QString, mode);
    QTemporaryDir dir;
    const QString data = dir.filePath(QStringLiteral("data"));
    ServerProcess server({QStringLiteral("--data-dir"), data, QStringLiteral("--cars"), QStringLiteral("10"),
                          QStringLiteral("--mode"), mode, QStringLiteral("--workers"), QStringLiteral("2")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    const QString base = server.url().toString(QUrl::StripTrailingSlash);

    const BenchRun run = runBench({base + QStringLiteral("/hello"), QStringLiteral("-c"), QStringLiteral("2"),
                                   QStringLiteral("-t"), QStringLiteral("1"), QStringLiteral("-n"),
                                   QStringLiteral("200"), QStringLiteral("--record-to"), base});
    QVERIFY2(run.exitCode == 0, run.err.constData());

    const auto events = eventsOfKind(data, QStringLiteral("benchmark"));
    QCOMPARE(events.size(), std::size_t(1));
    const QJsonObject detail = events.front().detail;
    QCOMPARE(detail.value("tool").toString(), QStringLiteral("taxicore-bench"));
    QCOMPARE(detail.value("mode").toString(), mode);
    QVERIFY2(detail.value("url").toString().endsWith(QLatin1String("/hello")),
             qPrintable(detail.value("url").toString()));
    QCOMPARE(detail.value("concurrency").toInt(), 2);
    QCOMPARE(detail.value("responses").toDouble(), 200.0);
    QCOMPARE(detail.value("errors").toDouble(), 0.0);
    QVERIFY(detail.value("requests_per_s").toDouble() > 0);
    QVERIFY(detail.value("duration_s").toDouble() > 0);
    QVERIFY(detail.value("p99_ms").toDouble() >= detail.value("p50_ms").toDouble());
    QVERIFY(detail.value("p50_ms").toDouble() > 0);
    QVERIFY(!detail.contains("stages")); // one stage: its figures are the run's
    QCOMPARE(server.stop(), 0);
}

void ServerEventsTest::benchSaysWhenItCannotRecord()
{
    ServerProcess server({QStringLiteral("--cars"), QStringLiteral("10")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    const QString base = server.url().toString(QUrl::StripTrailingSlash);

    // A bad URL is a usage error before any load (2); a record that fails is an output failure (1).
    BenchRun run = runBench({base + QStringLiteral("/hello"), QStringLiteral("-n"), QStringLiteral("10"),
                             QStringLiteral("--record-to"), QStringLiteral("https://x")});
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains("--record-to"), run.err.constData());

    // A server that is gone: the run is made against another one, the record cannot be.
    const quint16 closedPort = server.port();
    ServerProcess other({QStringLiteral("--cars"), QStringLiteral("10")});
    QVERIFY2(other.start(), qPrintable(other.error()));
    QCOMPARE(server.stop(), 0);
    run = runBench({other.url().toString(QUrl::StripTrailingSlash) + QStringLiteral("/hello"), QStringLiteral("-n"),
                    QStringLiteral("10"), QStringLiteral("--record-to"),
                    QStringLiteral("http://127.0.0.1:%1").arg(closedPort)});
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains("cannot record the run"), run.err.constData());
    QCOMPARE(other.stop(), 0);
}

QTEST_MAIN(ServerEventsTest)
#include "ledger_server_events_test.moc"
