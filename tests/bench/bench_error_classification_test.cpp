#include "EngineTestSupport.h"
#include "TestHttpServer.h"

#include <QElapsedTimer>

using namespace benchtest;

class ErrorClassificationTest : public QObject {
    Q_OBJECT

private slots:
    void resetConnectionsAreReadErrors()
    {
        TestHttpServer server(TestHttpServer::Behaviour::Reset);
        const StageResult result = runGet(server.url(), countSettings(2, 40));
        QCOMPARE(result.totals.value(WorkerStats::ReadErrors) + result.totals.value(WorkerStats::WriteErrors),
                 uint64_t{40});
        QVERIFY(result.totals.value(WorkerStats::ReadErrors) > 0);
        QCOMPARE(result.responses(), uint64_t{0});
        QCOMPARE(result.totals.value(WorkerStats::Timeouts), uint64_t{0});
        QCOMPARE(result.totals.value(WorkerStats::ConnectErrors), uint64_t{0});
    }

    void stalledRequestsTimeOut()
    {
        TestHttpServer server(TestHttpServer::Behaviour::Stall);
        // 1.1 s: the fifth timeout of each connection (at ~1.0 s) does not race the end.
        LoadSettings settings = durationSettings(2, 1100ms);
        settings.timeout = 200ms;
        QElapsedTimer wall;
        wall.start();
        const StageResult result = runGet(server.url(), settings);
        QVERIFY(wall.elapsed() < 2500);
        const uint64_t timeouts = result.totals.value(WorkerStats::Timeouts);
        // Each connection times out every 200 ms: about 5 each in 1.1 s.
        QVERIFY2(timeouts >= 6 && timeouts <= 12, qPrintable(QString::number(timeouts)));
        QCOMPARE(result.responses(), uint64_t{0});
        QCOMPARE(result.errors(), timeouts);
        // The last request of each connection was cut short by the end of the run (unless its
        // timeout fell on the very end).
        const uint64_t unfinished = result.totals.value(WorkerStats::UnfinishedAtEnd);
        QVERIFY2(unfinished >= 1 && unfinished <= 2, qPrintable(QString::number(unfinished)));
    }

    void serverErrorsAreCountedByStatus()
    {
        TestHttpServer server(TestHttpServer::Behaviour::Status500);
        const StageResult result = runGet(server.url(), countSettings(3, 60));
        QCOMPARE(result.responses(), uint64_t{60});
        QCOMPARE(result.totals.value(WorkerStats::HttpErrors), uint64_t{60});
        QCOMPARE(result.errorStatuses.size(), std::size_t{1});
        QCOMPARE(result.errorStatuses.at(500), uint64_t{60});
        QCOMPARE(result.totals.value(WorkerStats::Successes), uint64_t{0});
        QCOMPARE(result.totals.corrected.count(), uint64_t{60}); // latency is still measured
    }

    void refusedConnectionsAreConnectErrors()
    {
        const StageResult result =
            runGet("http://127.0.0.1:" + std::to_string(TestHttpServer::refusingPort()) + "/", countSettings(1, 5));
        QCOMPARE(result.totals.value(WorkerStats::ConnectErrors), uint64_t{5});
        QCOMPARE(result.errors(), uint64_t{5});
        QCOMPARE(result.responses(), uint64_t{0});
    }

    void targetProbeReportsARefusal()
    {
        const Target target = targetFor("http://127.0.0.1:" + std::to_string(TestHttpServer::refusingPort()) + "/");
        const std::string why = target.probe(1000ms);
        QVERIFY2(why.find("refused") != std::string::npos, why.c_str());
        TestHttpServer server(TestHttpServer::Behaviour::Hello);
        QCOMPARE(targetFor(server.url()).probe(1000ms), std::string());
    }

    void badUrlsAreRejectedWithAReason_data()
    {
        QTest::addColumn<QString>("url");
        QTest::addColumn<QString>("reason");
        QTest::newRow("scheme") << "ftp://x/"
                                << "expected http://";
        QTest::newRow("https") << "https://127.0.0.1/"
                               << "https";
        QTest::newRow("port") << "http://127.0.0.1:99999/"
                              << "port";
        QTest::newRow("no host") << "http://:80/"
                                 << "no host";
    }

    void badUrlsAreRejectedWithAReason()
    {
        QFETCH(QString, url);
        QFETCH(QString, reason);
        std::string error;
        QVERIFY(!Target::fromUrl(url.toStdString(), error));
        QVERIFY2(QString::fromStdString(error).contains(reason), error.c_str());
    }
};

QTEST_GUILESS_MAIN(ErrorClassificationTest)
#include "bench_error_classification_test.moc"
