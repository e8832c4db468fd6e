// While every worker is stalled (its heartbeat late), the primary answers the connections it is
// given and closes them: it drains. A live-feed upgrade that reaches it is refused (503) instead
// of upgraded: an upgraded socket leaves the guard's draining for good, and the primary's feed
// sockets came on top of the workers' (29 open with --max-connections 20, found under ASan).

#include "HttpClient.h"
#include "RuntimeKit.h"
#include "ServerProcess.h"

#include <QTest>
#include <csignal>

using namespace taxicore::test;
using namespace taxicore::test::rt;

namespace {
constexpr int kWorkers = 2;
// Past the dispatcher's 500 ms heartbeat limit, far below the supervisor's stall timeout.
constexpr int kStallMs = 1200;
} // namespace

class StalledWorkersFeedTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aFeedUpgradeReachingTheDrainingPrimaryIsRefused();
};

void StalledWorkersFeedTest::aFeedUpgradeReachingTheDrainingPrimaryIsRefused()
{
    ServerProcess server({QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"),
                          QString::number(kWorkers), QStringLiteral("--cars"), QStringLiteral("20")});
    QVERIFY2(server.start(20'000), qPrintable(server.error()));
    QVERIFY2(waitForWorkersTakingConnections(server, kWorkers, 15'000), qPrintable(describeEvents(server)));
    QList<qint64> pids;
    for (const WorkerInfo &w : serving(server))
        pids << w.pid;
    QCOMPARE(pids.size(), kWorkers);
    for (qint64 pid : pids)
        ::kill(pid_t(pid), SIGSTOP);
    QTest::qWait(kStallMs);

    HttpClient http(server.host(), server.port(), 3000);
    const HttpResponse upgrade = http.request("GET", "/api/v1/stream", {},
                                              {{"Upgrade", "websocket"},
                                               {"Connection", "Upgrade"},
                                               {"Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="},
                                               {"Sec-WebSocket-Version", "13"}});
    const HttpResponse hello = HttpClient(server.host(), server.port(), 3000).get("/hello");
    for (qint64 pid : pids)
        ::kill(pid_t(pid), SIGCONT);

    QVERIFY2(hello.complete && hello.status == 200, hello.describe().constData()); // the primary serves
    QVERIFY2(upgrade.complete, upgrade.describe().constData());
    QCOMPARE(upgrade.status, 503);
    QVERIFY2(upgrade.body.contains("\"draining\""), upgrade.body.constData());
    QCOMPARE(upgrade.header("Connection").toLower(), QByteArray("close"));
    QVERIFY2(server.isRunning(), server.stderrText().constData());
    QCOMPARE(server.stop(), 0);
}

QTEST_GUILESS_MAIN(StalledWorkersFeedTest)
#include "runtime_stalled_workers_feed_test.moc"
