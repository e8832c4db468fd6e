#include "EngineTestSupport.h"
#include "TestHttpServer.h"

#include <QElapsedTimer>

using namespace benchtest;

class HttpModesTest : public QObject {
    Q_OBJECT

private slots:
    void keepAliveReusesOneConnectionPerClient()
    {
        TestHttpServer server(TestHttpServer::Behaviour::Hello);
        const StageResult result = runGet(server.url(), countSettings(4, 400));
        QCOMPARE(result.responses(), uint64_t{400});
        QCOMPARE(result.errors(), uint64_t{0});
        QCOMPARE(server.requestsSeen(), uint64_t{400});
        QCOMPARE(server.connectionsAccepted(), uint64_t{4});
        QCOMPARE(server.http10Requests(), uint64_t{0});
    }

    void noKeepAliveOpensAConnectionPerRequest()
    {
        TestHttpServer server(TestHttpServer::Behaviour::Hello);
        LoadSettings settings = countSettings(4, 200);
        settings.httpMode = HttpMode::ConnectionPerRequest;
        const StageResult result = runGet(server.url(), settings);
        QCOMPARE(result.responses(), uint64_t{200});
        QCOMPARE(result.errors(), uint64_t{0});
        QCOMPARE(server.connectionsAccepted(), uint64_t{200});
        QCOMPARE(result.totals.value(WorkerStats::ConnectionsOpened), uint64_t{200});
    }

    void http10SpeaksHttp10WithAConnectionPerRequest()
    {
        TestHttpServer server(TestHttpServer::Behaviour::Hello);
        LoadSettings settings = countSettings(8, 200);
        settings.httpMode = HttpMode::Http10;
        const StageResult result = runGet(server.url(), settings);
        QCOMPARE(result.responses(), uint64_t{200});
        QCOMPARE(result.errors(), uint64_t{0});
        QCOMPARE(server.http10Requests(), uint64_t{200});
        QCOMPARE(server.connectionsAccepted(), uint64_t{200});
    }

    void chunkedResponsesKeepTheConnection()
    {
        TestHttpServer server(TestHttpServer::Behaviour::Chunked);
        const StageResult result = runGet(server.url(), countSettings(2, 100));
        QCOMPARE(result.totals.value(WorkerStats::Successes), uint64_t{100});
        QCOMPARE(server.connectionsAccepted(), uint64_t{2});
        QCOMPARE(result.totals.value(WorkerStats::BytesRead) > 100 * 12, true);
    }

    void severalThreadsShareTheRequestCount()
    {
        TestHttpServer server(TestHttpServer::Behaviour::Hello);
        LoadSettings settings = countSettings(6, 333);
        settings.threads = 3;
        const StageResult result = runGet(server.url(), settings);
        QCOMPARE(result.threads, 3);
        QCOMPARE(result.responses(), uint64_t{333});
        QCOMPARE(server.requestsSeen(), uint64_t{333});
    }

    void durationRunEndsOnTime()
    {
        TestHttpServer server(TestHttpServer::Behaviour::Hello);
        QElapsedTimer wall;
        wall.start();
        const StageResult result = runGet(server.url(), durationSettings(4, 1000ms));
        QVERIFY2(wall.elapsed() < 2000, qPrintable(QString::number(wall.elapsed())));
        QVERIFY(std::abs(result.elapsedSeconds - 1.0) < 0.05);
        QVERIFY(result.responses() > 0);
        QVERIFY(!result.series.empty());
        // Every request the server saw was either counted or reported as unfinished.
        const uint64_t unfinished = result.totals.value(WorkerStats::UnfinishedAtEnd);
        QVERIFY(unfinished <= 4);
        QVERIFY2(server.requestsSeen() >= result.responses()
                     && server.requestsSeen() <= result.responses() + unfinished,
                 qPrintable(QStringLiteral("server saw %1, client counted %2 + %3 unfinished")
                                .arg(server.requestsSeen())
                                .arg(result.responses())
                                .arg(unfinished)));
    }

    void warmUpRequestsAreNotCounted()
    {
        TestHttpServer server(TestHttpServer::Behaviour::Hello);
        LoadSettings settings = countSettings(2, 50);
        settings.warmup = 300ms;
        const StageResult result = runGet(server.url(), settings);
        QCOMPARE(result.responses(), uint64_t{50});
        QVERIFY2(server.requestsSeen() > 50, qPrintable(QString::number(server.requestsSeen())));
    }
};

QTEST_GUILESS_MAIN(HttpModesTest)
#include "bench_http_modes_test.moc"
