// One client address cannot hold all of the server's connections. --max-connections caps them in
// total (per process), so one address opening that many idle connections locked every other rider
// out. Now at most --max-connections-per-client (default 64) are open at once from one peer
// address, counted by every process of the machine in the shared region: the next is answered
// 429 too_many_connections naming the limit, without its request being read, and closed; another
// address is still served meanwhile; closing one lets a new one in. It holds in single, pool and
// processes mode (both policies: connections spread over the workers), after a worker is killed
// with -9 while it holds connections (its counts are returned when the supervisor sees it die),
// and across live mode switches (no count leaked, none counted twice). Trusted loopback clients
// (benchmarks, the test suite) and --trusted-proxy peers (a proxy carries many riders) are not
// capped, so the clients here are other 127.x addresses with --trust-loopback off: all of
// 127.0.0.0/8 reaches the server listening on 127.0.0.1, each a peer address of its own.
#include "AddressedClient.h"
#include "ApiAssert.h"
#include "HttpClient.h"
#include "ServerProcess.h"
#include "Wait.h"

#include <QDeadlineTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <arpa/inet.h>
#include <cerrno>
#include <csignal>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

using namespace taxicore::test;
using taxicore::test::hostile::AddressedClient;

namespace {

constexpr int kDefaultPerClient = 64; // --max-connections-per-client's default
const QString kAdminToken = QStringLiteral("conncap-admin-token-0123456789abcdef");
// Connections held here stay open for the whole case (the default 15 s idle timeout would close
// them under a slow machine and give their counts back).
const QString kIdleMs = QStringLiteral("120000");

using Clients = std::vector<std::unique_ptr<AddressedClient>>;

// Opens `count` connections from `from`, each answering GET /hello with 200 and held open. An
// answer that says Connection: close (a connection the primary served in-process while it drains,
// in processes mode) holds nothing: another connection is opened in its place.
bool holdServed(Clients &clients, const char *from, const ServerProcess &server, int count, QByteArray &why)
{
    why.clear();
    for (int held = 0, closing = 0; held < count;) {
        auto client = std::make_unique<AddressedClient>(from, server.port());
        const HttpResponse r = client->served();
        if (!r.complete || r.status != 200) {
            why = QByteArray("connection ") + QByteArray::number(held + 1) + " of " + QByteArray::number(count)
                  + " from " + from + " was not served: " + r.describe();
            return false;
        }
        if (r.header("Connection").compare("close", Qt::CaseInsensitive) == 0) {
            if (++closing > count) {
                why = QByteArray("every connection from ") + from + " was answered with Connection: close";
                return false;
            }
            continue;
        }
        clients.push_back(std::move(client));
        ++held;
    }
    return true;
}

// The answer one more connection from `from` gets, which must be the named refusal.
bool refused(const char *from, const ServerProcess &server, int limit, QByteArray &why)
{
    why.clear();
    AddressedClient client(from, server.port());
    const HttpResponse r = client.served();
    const bool ok = r.complete && r.status == 429 && r.json().value("error").toString() == "too_many_connections"
                    && r.json().value("message").toString().contains(QString::number(limit));
    if (!ok)
        why = QByteArray("connection ") + QByteArray::number(limit + 1) + " from " + from
              + " should get 429 too_many_connections naming " + QByteArray::number(limit) + ", got: " + r.describe();
    else if (!client.closedByServer(5000))
        why = QByteArray("the refused connection from ") + from + " was not closed";
    return ok && why.isEmpty();
}

// A new connection from `from` is served, once the server has seen earlier ones close.
bool servedAgain(Clients &clients, const char *from, const ServerProcess &server, QByteArray &why)
{
    HttpResponse last;
    const bool ok = waitUntil(
        [&] {
            auto client = std::make_unique<AddressedClient>(from, server.port());
            last = client->served();
            if (last.complete && last.status == 200) {
                clients.push_back(std::move(client));
                return true;
            }
            return false;
        },
        10'000, 100);
    if (!ok)
        why = QByteArray("no new connection from ") + from + " was served after one closed: " + last.describe();
    return ok;
}

// Holds `count` connections from `from`, retrying (all closed in between) until the server has
// seen earlier ones of the address close.
bool holdEventually(Clients &clients, const char *from, const ServerProcess &server, int count, QByteArray &why)
{
    return waitUntil(
        [&] {
            clients.clear();
            return holdServed(clients, from, server, count, why);
        },
        10'000, 100);
}

HttpResponse admin(const ServerProcess &server, const QByteArray &method, const QByteArray &path,
                   const QByteArray &body = {})
{
    HttpClient http(server.host(), server.port());
    return http.request(method, path, body,
                        {{"Authorization", "Bearer " + kAdminToken.toLatin1()}, {"Content-Type", "application/json"}});
}

// The pids of the workers serving now (slot state "serving").
QList<qint64> servingWorkers(const ServerProcess &server)
{
    QList<qint64> pids;
    for (const QJsonValue &v : admin(server, "GET", "/admin/v1/workers").json().value("workers").toArray())
        if (v.toObject().value("state").toString() == QStringLiteral("serving"))
            pids.append(qint64(v.toObject().value("pid").toDouble()));
    return pids;
}

// Each worker has answered a request, so the primary passes it connections.
bool workersTakeConnections(const ServerProcess &server, int count)
{
    return waitUntil(
        [&] {
            int taking = 0;
            for (const QJsonValue &v : admin(server, "GET", "/admin/v1/workers").json().value("workers").toArray())
                if (v.toObject().value("state").toString() == QStringLiteral("serving")
                    && v.toObject().value("requests").toDouble() > 0)
                    ++taking;
            return taking == count;
        },
        15'000, 50);
}

QStringList capped(const QString &perClient)
{
    QStringList args{QStringLiteral("--cars"),
                     QStringLiteral("10"),
                     QStringLiteral("--trust-loopback"),
                     QStringLiteral("off"),
                     QStringLiteral("--admin-token"),
                     kAdminToken,
                     QStringLiteral("--idle-timeout-ms"),
                     kIdleMs};
    if (!perClient.isEmpty())
        args << QStringLiteral("--max-connections-per-client") << perClient;
    return args;
}

QStringList processes(int workers, const QString &policy = QStringLiteral("round-robin"))
{
    return {QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"),
            QString::number(workers), QStringLiteral("--policy"),  policy};
}

} // namespace

class ConnectionsPerClientTest : public QObject {
    Q_OBJECT

private slots:
    void oneAddressCannotHoldEveryConnection();
    void theCapHoldsInEveryMode_data();
    void theCapHoldsInEveryMode();
    void aKilledWorkerGivesItsConnectionsBack();
    void modeSwitchesLeakNoCount();
    void trustedLoopbackAndTrustedProxiesAreNotCapped();
};

// The default, in the default mode: the 65th connection of one address is refused, someone else
// is served meanwhile, and a closed connection makes room.
void ConnectionsPerClientTest::oneAddressCannotHoldEveryConnection()
{
    ServerProcess server(capped({}));
    QVERIFY2(server.start(), qPrintable(server.error()));
    Clients hog;
    QByteArray why;
    QVERIFY2(holdServed(hog, "127.0.0.2", server, kDefaultPerClient, why), why.constData());
    QVERIFY2(refused("127.0.0.2", server, kDefaultPerClient, why), why.constData());
    Clients other;
    QVERIFY2(holdServed(other, "127.0.0.3", server, 3, why), why.constData());
    // The connections held are still served.
    TC_VERIFY_STATUS(hog.front()->hello(), 200);
    hog.pop_back();
    QVERIFY2(servedAgain(hog, "127.0.0.2", server, why), why.constData());
    QVERIFY2(refused("127.0.0.2", server, kDefaultPerClient, why), why.constData());
    QCOMPARE(server.stop(), 0);
}

void ConnectionsPerClientTest::theCapHoldsInEveryMode_data()
{
    QTest::addColumn<QStringList>("modeArgs");
    QTest::addColumn<int>("workers");
    QTest::newRow("single") << QStringList{} << 0;
    QTest::newRow("pool") << QStringList{QStringLiteral("--mode"), QStringLiteral("pool")} << 0;
    QTest::newRow("processes round-robin") << processes(2) << 2;
    QTest::newRow("processes kernel") << processes(2, QStringLiteral("kernel")) << 2;
}

// In processes mode the connections of one address spread over the workers (round-robin: every
// other one; kernel: as the kernel hashes them), so a count per worker would let 2 × N in.
void ConnectionsPerClientTest::theCapHoldsInEveryMode()
{
    QFETCH(QStringList, modeArgs);
    QFETCH(int, workers);
    constexpr int kLimit = 6;
    ServerProcess server(capped(QString::number(kLimit)) + modeArgs);
    QVERIFY2(server.start(), qPrintable(server.error()));
    if (workers > 0)
        QVERIFY2(workersTakeConnections(server, workers), server.stderrText().constData());
    Clients hog;
    QByteArray why;
    QVERIFY2(holdServed(hog, "127.0.0.2", server, kLimit, why), why.constData());
    for (int i = 0; i < 3; ++i)
        QVERIFY2(refused("127.0.0.2", server, kLimit, why), why.constData());
    Clients other;
    QVERIFY2(holdServed(other, "127.0.0.3", server, kLimit, why), why.constData());
    hog.erase(hog.begin());
    QVERIFY2(servedAgain(hog, "127.0.0.2", server, why), why.constData());
    QVERIFY2(refused("127.0.0.2", server, kLimit, why), why.constData());
    QCOMPARE(server.stop(), 0);
}

// A worker killed with -9 never closes its connections itself: the supervisor returns its counts
// when it sees the worker die, so the address gets its N connections again.
void ConnectionsPerClientTest::aKilledWorkerGivesItsConnectionsBack()
{
    constexpr int kLimit = 8;
    ServerProcess server(capped(QString::number(kLimit)) + processes(2));
    QVERIFY2(server.start(), qPrintable(server.error()));
    QVERIFY2(workersTakeConnections(server, 2), server.stderrText().constData());
    const QList<qint64> before = servingWorkers(server);
    QCOMPARE(before.size(), 2);

    Clients hog;
    QByteArray why;
    QVERIFY2(holdServed(hog, "127.0.0.2", server, kLimit, why), why.constData());
    QVERIFY2(refused("127.0.0.2", server, kLimit, why), why.constData());

    QCOMPARE(::kill(pid_t(before.first()), SIGKILL), 0);
    QVERIFY2(waitUntil(
                 [&] {
                     const QList<qint64> now = servingWorkers(server);
                     return now.size() == 2 && !now.contains(before.first());
                 },
                 15'000, 50),
             "the killed worker was not respawned");
    QVERIFY(workersTakeConnections(server, 2));
    // Its connections died with it; the others close now.
    hog.clear();
    // All kLimit again (the survivor's closes are seen within moments), and not one more.
    QVERIFY2(holdEventually(hog, "127.0.0.2", server, kLimit, why),
             (QByteArray("after the worker holding some of its connections was killed, the address could not "
                         "open its connections again (the dead worker's counts were kept): ")
              + why)
                 .constData());
    QVERIFY2(refused("127.0.0.2", server, kLimit, why), why.constData());
    QCOMPARE(server.stop(), 0);
}

// single → processes → pool → single: the connections a switch drains give their counts back,
// and those the new mode serves are counted once.
void ConnectionsPerClientTest::modeSwitchesLeakNoCount()
{
    constexpr int kLimit = 5;
    ServerProcess server(capped(QString::number(kLimit)));
    QVERIFY2(server.start(), qPrintable(server.error()));
    const QList<QJsonObject> steps{
        QJsonObject{{"mode", "processes"}, {"workers", 2}},
        QJsonObject{{"mode", "pool"}, {"threads", 2}},
        QJsonObject{{"mode", "single"}},
    };
    Clients hog;
    QByteArray why;
    QVERIFY2(holdServed(hog, "127.0.0.2", server, kLimit, why), why.constData());
    for (const QJsonObject &step : steps) {
        const HttpResponse switched =
            admin(server, "PUT", "/admin/v1/runtime", QJsonDocument(step).toJson(QJsonDocument::Compact));
        TC_VERIFY_STATUS(switched, 200);
        if (step.value("mode").toString() == QStringLiteral("processes"))
            QVERIFY(workersTakeConnections(server, 2));
        // What the old mode served closes (a switch into or out of processes drains it; single ↔
        // pool keeps it, and the client closes it here): every count it held is given back once,
        // and what the new mode serves is counted once.
        if (step.value("mode").toString() == QStringLiteral("pool")) // the connections stay: still counted
            QVERIFY2(refused("127.0.0.2", server, kLimit, why), why.constData());
        hog.clear();
        QVERIFY2(holdEventually(hog, "127.0.0.2", server, kLimit, why),
                 qPrintable(QStringLiteral("after the switch to %1: %2")
                                .arg(step.value("mode").toString(), QString::fromLatin1(why))));
        QVERIFY2(refused("127.0.0.2", server, kLimit, why), why.constData());
    }
    QCOMPARE(server.stop(), 0);
}

// A trusted loopback client (the default: benchmarks, the console, this suite) and a trusted
// proxy (it carries many riders on its connections) open more than the cap.
void ConnectionsPerClientTest::trustedLoopbackAndTrustedProxiesAreNotCapped()
{
    constexpr int kLimit = 3;
    QByteArray why;
    {
        ServerProcess server({QStringLiteral("--cars"), QStringLiteral("10"), QStringLiteral("--idle-timeout-ms"),
                              kIdleMs, QStringLiteral("--max-connections-per-client"), QString::number(kLimit)});
        QVERIFY2(server.start(), qPrintable(server.error()));
        Clients local;
        QVERIFY2(holdServed(local, "127.0.0.2", server, 4 * kLimit, why), why.constData());
        QCOMPARE(server.stop(), 0);
    }
    ServerProcess server(capped(QString::number(kLimit))
                         + QStringList{QStringLiteral("--trusted-proxy"), QStringLiteral("127.0.0.5")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    Clients proxy;
    QVERIFY2(holdServed(proxy, "127.0.0.5", server, 4 * kLimit, why), why.constData());
    Clients hog;
    QVERIFY2(holdServed(hog, "127.0.0.2", server, kLimit, why), why.constData());
    QVERIFY2(refused("127.0.0.2", server, kLimit, why), why.constData());
    QCOMPARE(server.stop(), 0);
}

QTEST_GUILESS_MAIN(ConnectionsPerClientTest)
#include "hostile_connections_per_client_test.moc"
