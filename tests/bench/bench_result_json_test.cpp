#include "report/ResultJson.h"
#include "EngineTestSupport.h"
#include "TestHttpServer.h"

#include <QJsonArray>
#include <QJsonObject>

using namespace benchtest;

namespace {

void requireNumber(const QJsonObject &object, const char *key)
{
    QVERIFY2(object.value(key).isDouble(), key);
}

void requireKeys(const QJsonObject &object, std::initializer_list<const char *> numberKeys)
{
    for (const char *key : numberKeys)
        requireNumber(object, key);
}

} // namespace

class ResultJsonTest : public QObject {
    Q_OBJECT

private:
    QJsonObject m_json;
    QJsonObject m_stage;

private slots:
    void initTestCase()
    {
        TestHttpServer server(TestHttpServer::Behaviour::Status500);
        LoadSettings settings = countSettings(2, 40);
        settings.rate = 400;
        RunResult run;
        run.scenarioName = "demo";
        run.scenarioSource = "a test";
        run.url = server.url();
        run.startedAtUtc = currentUtcIso8601();
        run.stages.push_back(runGet(server.url(), settings));
        run.stages.back().name = "c2";
        m_json = runResultToJson(run, MachineInfo::current());
        QVERIFY(m_json["stages"].isArray());
        m_stage = m_json["stages"].toArray().first().toObject();
    }

    void topLevelFieldsHaveTheirTypes()
    {
        QCOMPARE(m_json["type"].toString(), QString("result"));
        QVERIFY(m_json["schema_version"].isDouble());
        QVERIFY(m_json["version"].isString());
        QCOMPARE(m_json["scenario"][QLatin1String("name")].toString(), QString("demo"));
        QVERIFY(m_json["scenario"][QLatin1String("source")].isString());
        QVERIFY(m_json["machine"][QLatin1String("cores")].toInt() >= 1);
        QVERIFY(m_json["client_bound"].isBool());
        QVERIFY(m_json["started_at"].toString().endsWith('Z'));
    }

    void settingsAreRecorded()
    {
        const QJsonObject settings = m_stage["settings"].toObject();
        QCOMPARE(settings["connections"].toInt(), 2);
        QCOMPARE(settings["requests"].toInt(), 40);
        QVERIFY(settings["duration_s"].isNull());
        QCOMPARE(settings["loop"].toString(), QString("open"));
        QCOMPARE(settings["rate"].toDouble(), 400.0);
        QCOMPARE(settings["http"].toString(), QString("keep-alive"));
        requireKeys(settings, {"threads", "timeout_s", "warmup_s"});
    }

    void summaryAndErrorsMatchTheRun()
    {
        const QJsonObject summary = m_stage["summary"].toObject();
        requireKeys(summary, {"elapsed_s", "responses", "requests_per_s", "successes", "no_car", "conflicts", "errors",
                              "bytes_read", "connections_opened", "unfinished_at_end"});
        QCOMPARE(summary["responses"].toInt(), 40);
        QVERIFY(summary["interrupted"].isBool());
        const QJsonObject errors = m_stage["errors"].toObject();
        requireKeys(errors, {"total", "connect", "read", "write", "timeout"});
        QCOMPARE(errors["status"][QLatin1String("500")].toInt(), 40);
        QCOMPARE(errors["total"].toInt(), 40);
    }

    void latencyHasPercentilesForBothDistributions()
    {
        for (const char *which : {"corrected", "uncorrected", "schedule_lag"}) {
            const QJsonObject latency = m_stage["latency"][QLatin1String(which)].toObject();
            requireKeys(latency, {"count", "min_ms", "mean_ms", "stddev_ms", "p50_ms", "p90_ms", "p95_ms", "p99_ms",
                                  "p99_9_ms", "max_ms"});
        }
        const QJsonObject corrected = m_stage["latency"][QLatin1String("corrected")].toObject();
        QCOMPARE(corrected["count"].toInt(), 40);
        QVERIFY(corrected["p50_ms"].toDouble() <= corrected["p99_ms"].toDouble());
        QVERIFY(corrected["p99_ms"].toDouble() <= corrected["max_ms"].toDouble());
    }

    void histogramListsNonEmptyBucketsSummingToTheCount()
    {
        const QJsonArray buckets = m_stage["histogram"][QLatin1String("corrected")].toArray();
        QVERIFY(!buckets.isEmpty());
        double total = 0;
        for (const QJsonValue &bucket : buckets) {
            const QJsonArray triple = bucket.toArray();
            QCOMPARE(triple.size(), 3);
            QVERIFY(triple[0].toDouble() < triple[1].toDouble());
            QVERIFY(triple[2].toDouble() > 0);
            total += triple[2].toDouble();
        }
        QCOMPARE(total, 40.0);
        QCOMPARE(m_stage["histogram"][QLatin1String("unit")].toString(), QString("ns"));
    }

    void seriesAndClientAreReported()
    {
        const QJsonArray series = m_stage["series"].toArray();
        QVERIFY(!series.isEmpty());
        for (const QJsonValue &point : series)
            requireKeys(point.toObject(), {"second", "elapsed_s", "responses", "requests_per_s", "errors", "p99_ms",
                                           "client_cpu_percent"});
        const QJsonObject client = m_stage["client"].toObject();
        requireKeys(client, {"threads", "thread_cpu_s", "process_cpu_s", "cpu_percent_of_threads", "cpu_us_per_request",
                             "schedule_lag_p99_ms"});
        QVERIFY(client["client_bound"].isBool());
        QVERIFY(m_stage["by_request"].isArray()); // empty: a single kind of request
        QVERIFY(client["client_bound_reason"].isString());
    }

    void progressLineHasItsFields()
    {
        SecondSample sample;
        sample.second = 3;
        sample.responses = 10;
        const QJsonObject line = progressToJson(1, "c64", sample);
        QCOMPARE(line["type"].toString(), QString("progress"));
        QCOMPARE(line["stage"].toInt(), 1);
        QCOMPARE(line["second"].toInt(), 3);
        requireKeys(line, {"elapsed_s", "responses", "requests_per_s", "errors", "p99_ms", "client_cpu_percent",
                           "total_responses", "total_errors"});
    }
};

QTEST_GUILESS_MAIN(ResultJsonTest)
#include "bench_result_json_test.moc"
