// The summary a run leaves in the server's ledger (a "benchmark" event): what the console's
// benchmark panel and `taxicore-bench --record-to` record, from the result JSON.
#include "report/BenchmarkEvent.h"

#include <QJsonArray>
#include <QTest>

using namespace taxicore::bench;

namespace {

QJsonObject stage(const char *name, int connections, double seconds, double responses, double p50, double p99,
                  double errors)
{
    return {{"name", name},
            {"settings", QJsonObject{{"connections", connections}}},
            {"summary", QJsonObject{{"elapsed_s", seconds},
                                    {"responses", responses},
                                    {"requests_per_s", responses / seconds},
                                    {"errors", errors},
                                    {"interrupted", false}}},
            {"latency", QJsonObject{{"corrected", QJsonObject{{"p50_ms", p50}, {"p99_ms", p99}}}}}};
}

QJsonObject result(const QJsonArray &stages, const QJsonValue &scenario)
{
    return {{"type", "result"},
            {"url", "http://127.0.0.1:8080/fib?n=25"},
            {"started_at", "2026-11-30T05:00:00Z"},
            {"scenario", scenario},
            {"stages", stages},
            {"client_bound", false}};
}

} // namespace

class BenchmarkEventTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void oneStageIsTheRun()
    {
        const QJsonObject detail =
            benchmarkEventDetail(result({stage("c64", 64, 10, 25000, 1.5, 9.25, 3)}, QJsonValue::Null), "pool");
        QCOMPARE(detail.value("tool").toString(), QStringLiteral("taxicore-bench"));
        QCOMPARE(detail.value("url").toString(), QStringLiteral("http://127.0.0.1:8080/fib?n=25"));
        QVERIFY(detail.value("scenario").isNull());
        QCOMPARE(detail.value("mode").toString(), QStringLiteral("pool"));
        QCOMPARE(detail.value("started_at").toString(), QStringLiteral("2026-11-30T05:00:00Z"));
        QCOMPARE(detail.value("concurrency").toInt(), 64);
        QCOMPARE(detail.value("duration_s").toDouble(), 10.0);
        QCOMPARE(detail.value("responses").toDouble(), 25000.0);
        QCOMPARE(detail.value("requests_per_s").toDouble(), 2500.0);
        QCOMPARE(detail.value("p50_ms").toDouble(), 1.5);
        QCOMPARE(detail.value("p99_ms").toDouble(), 9.25);
        QCOMPARE(detail.value("errors").toDouble(), 3.0);
        QCOMPARE(detail.value("interrupted").toBool(), false);
        QVERIFY(!detail.contains("stages"));
    }

    void severalStagesSumAndKeepTheWorstLatency()
    {
        const QJsonObject detail = benchmarkEventDetail(
            result({stage("c64", 64, 20, 40000, 2, 10, 0), stage("c1000", 1000, 20, 20000, 50, 400, 7)},
                   QJsonObject{{"name", "loadtest-fib25"}}),
            QString());
        QCOMPARE(detail.value("scenario").toString(), QStringLiteral("loadtest-fib25"));
        QVERIFY(detail.value("mode").isNull()); // not known: left empty, never guessed
        QCOMPARE(detail.value("concurrency").toInt(), 1000);
        QCOMPARE(detail.value("duration_s").toDouble(), 40.0);
        QCOMPARE(detail.value("responses").toDouble(), 60000.0);
        QCOMPARE(detail.value("requests_per_s").toDouble(), 1500.0);
        QCOMPARE(detail.value("p50_ms").toDouble(), 50.0);
        QCOMPARE(detail.value("p99_ms").toDouble(), 400.0);
        QCOMPARE(detail.value("errors").toDouble(), 7.0);
        const QJsonArray stages = detail.value("stages").toArray();
        QCOMPARE(stages.size(), 2);
        QCOMPARE(stages[1].toObject().value("name").toString(), QStringLiteral("c1000"));
        QCOMPARE(stages[1].toObject().value("requests_per_s").toDouble(), 1000.0);
    }

    void theBodyNamesTheKind()
    {
        const QJsonObject body = benchmarkEventBody({{"x", 1}});
        QCOMPARE(body.value("kind").toString(), QStringLiteral("benchmark"));
        QCOMPARE(body.value("detail").toObject().value("x").toInt(), 1);
    }
};

QTEST_GUILESS_MAIN(BenchmarkEventTest)
#include "bench_benchmark_event_test.moc"
