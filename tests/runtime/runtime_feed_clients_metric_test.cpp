// /metrics counts the live feed's WebSocket clients: taxicore_open_connections stops counting a
// socket once it upgrades, so an operator could not see how many riders follow the feed. Now
// taxicore_feed_clients is the clients open now, summed over the processes like every gauge there;
// a worker killed while it holds some gives its count back (its replacement starts from none).
// Real taxicore-server, real WebSocket clients, in every mode.

#include "RuntimeKit.h"

#include <QWebSocket>
#include <algorithm>
#include <csignal>
#include <memory>
#include <vector>

using namespace taxicore::test;
using namespace taxicore::test::rt;

namespace {

const QString kGauge = QStringLiteral("taxicore_feed_clients");

// A feed client: open once the feed said hello (it took the socket), closed once it disconnected.
struct FeedClient {
    std::unique_ptr<QWebSocket> socket = std::make_unique<QWebSocket>();
    bool hello = false;
    bool closed = false;

    explicit FeedClient(const ServerProcess &server)
    {
        QObject::connect(socket.get(), &QWebSocket::textMessageReceived, socket.get(),
                         [this](const QString &text) { hello = hello || text.contains(QLatin1String("\"hello\"")); });
        QObject::connect(socket.get(), &QWebSocket::disconnected, socket.get(), [this] { closed = true; });
        socket->open(QUrl(QStringLiteral("ws://%1:%2/api/v1/stream").arg(server.host()).arg(server.port())));
    }
};
using FeedClients = std::vector<std::unique_ptr<FeedClient>>;

bool openClients(FeedClients &clients, const ServerProcess &server, int count)
{
    for (int i = 0; i < count; ++i)
        clients.push_back(std::make_unique<FeedClient>(server));
    return waitUntil(
        [&] {
            return std::all_of(clients.begin(), clients.end(), [](const auto &c) { return c->hello && !c->closed; });
        },
        10'000, 10);
}

// The gauge reaches `expected` (and stays a number: -1 would say it is missing).
bool gaugeReaches(const ServerProcess &server, double expected, double &last)
{
    return waitUntil([&] { return (last = metric(server, kGauge)) == expected; }, 10'000);
}

QStringList processes()
{
    return {QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"), QStringLiteral("2")};
}

} // namespace

class FeedClientsMetricTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void theGaugeCountsOpenFeedClients_data();
    void theGaugeCountsOpenFeedClients();
    void aKilledWorkerGivesItsFeedClientsBack();
};

void FeedClientsMetricTest::theGaugeCountsOpenFeedClients_data()
{
    QTest::addColumn<QStringList>("modeArgs");
    QTest::newRow("single") << QStringList{};
    QTest::newRow("pool") << QStringList{QStringLiteral("--mode"), QStringLiteral("pool")};
    QTest::newRow("processes") << processes();
}

void FeedClientsMetricTest::theGaugeCountsOpenFeedClients()
{
    QFETCH(QStringList, modeArgs);
    ServerProcess server(QStringList{QStringLiteral("--cars"), QStringLiteral("5")} + modeArgs);
    QVERIFY2(server.start(), qPrintable(server.error()));
    if (modeArgs.contains(QStringLiteral("processes")))
        QVERIFY2(waitForWorkersTakingConnections(server, 2, 15'000), qPrintable(describeEvents(server)));
    double last = -1;
    QVERIFY2(gaugeReaches(server, 0, last),
             qPrintable(QStringLiteral("%1 is %2 with no client").arg(kGauge).arg(last)));

    FeedClients clients;
    QVERIFY2(openClients(clients, server, 3), "the feed did not take 3 clients");
    QVERIFY2(gaugeReaches(server, 3, last),
             qPrintable(QStringLiteral("%1 is %2 with 3 feed clients open").arg(kGauge).arg(last)));
    for (auto &c : clients)
        c->socket->close();
    QVERIFY2(
        waitUntil([&] { return std::all_of(clients.begin(), clients.end(), [](const auto &c) { return c->closed; }); },
                  5000),
        "the feed clients did not close");
    QVERIFY2(gaugeReaches(server, 0, last),
             qPrintable(QStringLiteral("%1 is %2 after every feed client closed").arg(kGauge).arg(last)));
    QCOMPARE(server.stop(), 0);
}

// kill -9 closes the worker's sockets without a word from its feed: the supervisor clears the
// dead worker's count, or the gauge would count its clients for good.
void FeedClientsMetricTest::aKilledWorkerGivesItsFeedClientsBack()
{
    ServerProcess server(QStringList{QStringLiteral("--cars"), QStringLiteral("5")} + processes());
    QVERIFY2(server.start(), qPrintable(server.error()));
    QVERIFY2(waitForWorkersTakingConnections(server, 2, 15'000), qPrintable(describeEvents(server)));
    constexpr int kClients = 6; // spread over both workers
    FeedClients clients;
    QVERIFY2(openClients(clients, server, kClients), "the feed did not take the clients");
    double last = -1;
    QVERIFY2(gaugeReaches(server, kClients, last), qPrintable(QStringLiteral("%1 is %2").arg(kGauge).arg(last)));

    const WorkerInfo victim = worker(server, 1);
    QVERIFY(victim.pid > 0);
    QVERIFY(::kill(pid_t(victim.pid), SIGKILL) == 0);
    QVERIFY2(waitUntil(
                 [&] {
                     const WorkerInfo now = worker(server, 1);
                     return now.pid != victim.pid && now.pid > 0 && now.state == QStringLiteral("serving");
                 },
                 15'000),
             qPrintable(describeEvents(server)));
    const auto stillOpen = [&] {
        return int(std::count_if(clients.begin(), clients.end(), [](const auto &c) { return !c->closed; }));
    };
    QVERIFY2(stillOpen() < kClients, "no feed client was on the killed worker");
    QVERIFY2(waitUntil([&] { return (last = metric(server, kGauge)) == stillOpen(); }, 10'000),
             qPrintable(QStringLiteral("%1 is %2 with %3 feed clients left open after worker 1 was killed")
                            .arg(kGauge)
                            .arg(last)
                            .arg(stillOpen())));
    clients.clear();
    QVERIFY2(gaugeReaches(server, 0, last),
             qPrintable(QStringLiteral("%1 is %2 after every feed client closed").arg(kGauge).arg(last)));
    QCOMPARE(server.stop(), 0);
}

QTEST_GUILESS_MAIN(FeedClientsMetricTest)
#include "runtime_feed_clients_metric_test.moc"
