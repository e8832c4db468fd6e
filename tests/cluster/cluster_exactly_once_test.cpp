// Three TaxiCore nodes on one PostgreSQL and one Redis, behind nginx, all real processes on
// loopback ports started by the test: bookings race for cars across nodes, and the database's
// claim in the ledger's commit lets each car go to exactly one of them (issue 17).

#include "HttpBatch.h"
#include "IdempotencyKit.h"
#include "NginxKit.h"
#include "PostgresKit.h"
#include "RedisKit.h"
#include "RequireTool.h"
#include "ServerProcess.h"
#include "Wait.h"

#include <QJsonArray>
#include <QTest>
#include <QThread>
#include <map>
#include <memory>
#include <set>
#include <signal.h>

using namespace taxicore::test;

namespace {

constexpr int kNodes = 3;
constexpr int kCars = 200;
constexpr int kRiders = 600;
constexpr int kBurstTimeoutMs = 90'000;

} // namespace

class ClusterExactlyOnceTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void eachCarIsBookedExactlyOnceAcrossNodes();
    void cancelledCarsAreFreeOnEveryNode();
    void afterARedisRestartEveryCopyResyncsFromTheDatabase();
    void killingTheLeaderMovesTheLeadAndNginxRoutesAround();
    void withPostgresqlDownBookingsAre503AndReadsGoOn();
    // Last: its riders' claims are in flight on every node while it runs.
    void oneKeySentToEveryNodeAtOnceMakesOneBooking();
    void cleanupTestCase();

private:
    std::unique_ptr<ServerProcess> startNode(const QString &mode);
    // The node whose newest "leader" event says it leads (-1: none), among the running ones.
    int leaderIndex();
    int freeCarsSeenBy(const ServerProcess &node);
    int freeCarsInTheDatabase();
    // The cars the node's copy and the database disagree on, in words (for a failure's message).
    QString disagreement(const ServerProcess &node);
    void cancelThroughNginx(int count);

    QList<QJsonObject> m_booked; // the 201 answers of the burst (with their rider tokens)
    int m_acknowledged = 0;      // every 201 so far: each must be in the database

    PostgresKit m_postgres;
    RedisKit m_redis;
    std::vector<std::unique_ptr<ServerProcess>> m_nodes;
    std::unique_ptr<NginxProcess> m_nginx;
};

std::unique_ptr<ServerProcess> ClusterExactlyOnceTest::startNode(const QString &mode)
{
    auto node = std::make_unique<ServerProcess>(
        QStringList{QStringLiteral("--mode"), mode, QStringLiteral("--workers"), QStringLiteral("2"),
                    QStringLiteral("--cars"), QString::number(kCars), QStringLiteral("--ledger"), m_postgres.url(),
                    QStringLiteral("--fleet"), m_redis.url(), QStringLiteral("--demand-rate"), QStringLiteral("0"),
                    QStringLiteral("--trusted-proxy"), QStringLiteral("127.0.0.1/32"),
                    // Every rider of the burst comes from this test's one address: not a flood to refuse.
                    QStringLiteral("--booking-burst"), QString::number(kRiders),
                    QStringLiteral("--open-bookings-per-client"), QStringLiteral("0")});
    if (!node->start(30'000))
        qWarning().noquote() << "node did not start:" << node->error() << node->stderrText();
    return node;
}

void ClusterExactlyOnceTest::initTestCase()
{
    TC_REQUIRE_TOOL(!PostgresKit::binDir().isEmpty(), "PostgreSQL is not installed (package postgresql)");
    TC_REQUIRE_TOOL(!RedisKit::program().isEmpty(), "redis-server is not installed (package redis-server)");
    TC_REQUIRE_TOOL(!NginxProcess::program().isEmpty(), "nginx is not installed (package nginx-light)");
    QVERIFY2(m_postgres.start(), qPrintable(m_postgres.error()));
    QString error;
    QVERIFY2(m_redis.start({}, &error), qPrintable(error));
    QList<quint16> ports;
    for (int i = 0; i < kNodes; ++i) {
        // Each node runs its own execution model; the last one's worker processes publish too.
        m_nodes.push_back(startNode(i == kNodes - 1 ? QStringLiteral("processes") : QStringLiteral("single")));
        QVERIFY2(m_nodes.back()->isRunning(), qPrintable(m_nodes.back()->stderrText()));
        ports << m_nodes.back()->port();
    }
    m_nginx = std::make_unique<NginxProcess>(ports);
    QVERIFY2(m_nginx->start(), qPrintable(m_nginx->error()));
}

// 600 riders at once through nginx for 200 cars, spread over three nodes whose copies of the
// fleet all start with every car free: exactly 200 bookings stand, no car twice, and every
// acknowledged booking is in PostgreSQL holding its car.
void ClusterExactlyOnceTest::eachCarIsBookedExactlyOnceAcrossNodes()
{
    const QList<HttpResponse> answers =
        sendConcurrently(m_nginx->host(), m_nginx->port(), bookingBurst(kRiders), kBurstTimeoutMs);
    std::map<int, int> statuses;
    std::set<qint64> bookingIds;
    std::multiset<int> cars;
    for (const HttpResponse &answer : answers) {
        ++statuses[answer.complete ? answer.status : -1];
        if (answer.status == 201) {
            const QJsonObject booking = answer.json();
            bookingIds.insert(booking.value(QStringLiteral("booking_id")).toInteger());
            m_booked.append(booking);
            ++m_acknowledged;
            cars.insert(booking.value(QStringLiteral("car")).toObject().value(QStringLiteral("id")).toInt());
        } else if (answer.status != 409) {
            qWarning().noquote() << "unexpected answer:" << answer.describe();
        }
    }
    QString summary;
    for (const auto &[status, count] : statuses)
        summary += QStringLiteral("%1×%2 ").arg(status).arg(count);
    qInfo().noquote() << "answers:" << summary;
    QCOMPARE(statuses[201], kCars);
    QCOMPARE(statuses[409], kRiders - kCars);
    QCOMPARE(int(bookingIds.size()), kCars);
    QCOMPARE(int(std::set<int>(cars.begin(), cars.end()).size()), kCars); // no car twice

    // The truth: every acknowledged booking is recorded, each holding its own car.
    const QStringList stored =
        m_postgres.psql(QStringLiteral("SELECT b.id FROM bookings b JOIN cars c ON c.booking_id = b.id"))
            .split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    QVERIFY2(!stored.isEmpty(), qPrintable(m_postgres.error()));
    std::set<qint64> storedIds;
    for (const QString &id : stored)
        storedIds.insert(id.toLongLong());
    QVERIFY(storedIds == bookingIds);
    QCOMPARE(m_postgres.psql(QStringLiteral("SELECT count(*) FROM bookings")).trimmed(), QString::number(kCars));

    // Every node's copy learns of the others' bookings: none offers a free car any more.
    for (const auto &node : m_nodes)
        QVERIFY2(waitUntil([&] { return freeCarsSeenBy(*node) == 0; }, 10'000),
                 "a node's copy still shows a free car 10 s after every car was booked");
}

int ClusterExactlyOnceTest::freeCarsSeenBy(const ServerProcess &node)
{
    HttpClient client(node.host(), node.port());
    return availableCars(client);
}

QString ClusterExactlyOnceTest::disagreement(const ServerProcess &node)
{
    HttpClient client(node.host(), node.port());
    const HttpResponse nearby = client.get("/api/v1/cars/nearby?lat=57.7&lng=11.97&radius_m=50000&limit=1000");
    std::map<int, QString> seen; // car -> state, as the node's copy has it
    for (const QJsonValue car : nearby.json().value(QStringLiteral("cars")).toArray())
        seen[car.toObject().value(QStringLiteral("id")).toInt()] =
            car.toObject().value(QStringLiteral("state")).toString();
    std::map<int, QString> held; // car -> booking, as the database has it
    for (const QString &line :
         m_postgres.psql(QStringLiteral("SELECT id, booking_id FROM cars WHERE booking_id IS NOT NULL"))
             .split(QLatin1Char('\n'), Qt::SkipEmptyParts))
        held[line.section(QLatin1Char('|'), 0, 0).toInt()] = line.section(QLatin1Char('|'), 1, 1);
    QStringList differ;
    for (int car = 1; car <= kCars; ++car) {
        const bool freeHere = seen.count(car) && seen[car] == QStringLiteral("available");
        if (freeHere == !held.count(car))
            continue;
        const QString booking = held.count(car) ? held[car] : QStringLiteral("none");
        const QString row =
            booking == QStringLiteral("none")
                ? QString()
                : m_postgres.psql(QStringLiteral("SELECT state, created_ms FROM bookings WHERE id = %1").arg(booking));
        differ << QStringLiteral("car %1: node %2, database booking %3 %4")
                      .arg(car)
                      .arg(seen.count(car) ? seen[car] : QStringLiteral("unseen"), booking, row.trimmed());
    }
    return differ.join(QStringLiteral("; "));
}

int ClusterExactlyOnceTest::freeCarsInTheDatabase()
{
    return kCars - m_postgres.psql(QStringLiteral("SELECT count(*) FROM cars WHERE booking_id IS NOT NULL")).toInt();
}

void ClusterExactlyOnceTest::cancelThroughNginx(int count)
{
    QVERIFY(m_booked.size() >= count);
    HttpClient client(m_nginx->host(), m_nginx->port());
    for (int i = 0; i < count; ++i) {
        const QJsonObject booking = m_booked.takeFirst();
        const QByteArray path =
            "/api/v1/bookings/" + QByteArray::number(booking.value("booking_id").toInteger()) + "/cancel";
        const HttpResponse cancelled = client.request(
            "POST", path, {}, {{"Authorization", "Bearer " + booking.value("rider_token").toString().toLatin1()}});
        QVERIFY2(cancelled.status == 200, qPrintable(cancelled.describe()));
    }
}

// Riders cancel through nginx (whichever node answers): the database frees each car, and every
// node's copy offers it again.
void ClusterExactlyOnceTest::cancelledCarsAreFreeOnEveryNode()
{
    constexpr int kCancelled = 20;
    cancelThroughNginx(kCancelled);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(m_postgres.psql(QStringLiteral("SELECT count(*) FROM cars WHERE booking_id IS NOT NULL")).trimmed(),
             QString::number(kCars - kCancelled));
    for (const auto &node : m_nodes)
        QVERIFY2(waitUntil([&] { return freeCarsSeenBy(*node) == kCancelled; }, 10'000),
                 qPrintable(QStringLiteral("node on port %1 sees %2 free cars, not %3")
                                .arg(node->port())
                                .arg(freeCarsSeenBy(*node))
                                .arg(kCancelled)));
}

// Redis is the derived view: while it is down bookings and cancellations go on (the database
// decides them), their announcements are lost; when it is back, every node reloads the live view
// and resyncs its copy from the database, so all copies agree with the truth again.
void ClusterExactlyOnceTest::afterARedisRestartEveryCopyResyncsFromTheDatabase()
{
    QVERIFY(m_redis.stop());
    // A rider books on one node and cancels at once through another, which never heard of the
    // booking (no feed now): that node finds it in the database and the cancel stands.
    {
        HttpClient first(m_nodes[0]->host(), m_nodes[0]->port()), second(m_nodes[1]->host(), m_nodes[1]->port());
        const HttpResponse booked =
            first.post("/api/v1/bookings", R"({"rider_id":"hopping-rider","pickup":{"lat":57.7,"lng":11.97}})");
        QVERIFY2(booked.status == 201, qPrintable(booked.describe()));
        ++m_acknowledged;
        const QByteArray path =
            "/api/v1/bookings/" + QByteArray::number(booked.json().value("booking_id").toInteger()) + "/cancel";
        const HttpResponse cancelled =
            second.request("POST", path, {},
                           {{"Authorization", "Bearer " + booked.json().value("rider_token").toString().toLatin1()}});
        QVERIFY2(cancelled.status == 200, qPrintable(cancelled.describe()));
    }
    cancelThroughNginx(10);
    if (QTest::currentTestFailed())
        return;
    HttpClient client(m_nginx->host(), m_nginx->port());
    const QList<HttpResponse> booked = sendConcurrently(m_nginx->host(), m_nginx->port(), bookingBurst(4), 30'000);
    for (const HttpResponse &answer : booked) {
        QVERIFY2(answer.status == 201, qPrintable(answer.describe()));
        ++m_acknowledged;
    }
    const int free = freeCarsInTheDatabase();
    QCOMPARE(free, 20 + 10 - 4);
    QString error;
    QVERIFY2(m_redis.restart(&error), qPrintable(error));
    for (const auto &node : m_nodes)
        QVERIFY2(waitUntil([&] { return freeCarsSeenBy(*node) == free; }, 15'000),
                 qPrintable(QStringLiteral("node on port %1 sees %2 free cars, the database %3; %4")
                                .arg(node->port())
                                .arg(freeCarsSeenBy(*node))
                                .arg(free)
                                .arg(disagreement(*node))));
    // The same cars, not only as many: a copy still resyncing can match the count by chance (two
    // cars it thinks free that were just booked, one booked it thinks taken), so the sets are
    // waited for as well; a copy that never agrees fails here with what differs.
    for (const auto &node : m_nodes)
        QVERIFY2(waitUntil([&] { return disagreement(*node).isEmpty(); }, 15'000),
                 qPrintable(QStringLiteral("node on port %1: %2").arg(node->port()).arg(disagreement(*node))));
    // The live view fills again as the leader's simulator moves cars.
    QVERIFY2(waitUntil([&] { return m_redis.rawCommand("HLEN taxicore:cars").mid(1).trimmed().toInt() > kCars / 2; },
                       15'000),
             m_redis.rawCommand("HLEN taxicore:cars").constData());
}

int ClusterExactlyOnceTest::leaderIndex()
{
    for (std::size_t i = 0; i < m_nodes.size(); ++i) {
        if (!m_nodes[i]->isRunning())
            continue;
        HttpClient client(m_nodes[i]->host(), m_nodes[i]->port(), 2000);
        const HttpResponse events = client.get("/admin/v1/events");
        for (const QJsonValue event : events.json().value(QStringLiteral("events")).toArray()) {
            if (event.toObject().value(QStringLiteral("kind")).toString() != QStringLiteral("leader"))
                continue;
            // The newest leader event: "this node leads ..." or "this node no longer leads ...".
            if (event.toObject().value(QStringLiteral("text")).toString().startsWith(QStringLiteral("this node leads")))
                return int(i);
            break;
        }
    }
    return -1;
}

// kill -9 of the node running the simulator: another node takes the lead within seconds, and
// nginx sends riders to the nodes still up.
void ClusterExactlyOnceTest::killingTheLeaderMovesTheLeadAndNginxRoutesAround()
{
    int leader = -1;
    QVERIFY2(waitUntil([&] { return (leader = leaderIndex()) >= 0; }, 10'000), "no node leads");
    const qint64 pid = m_nodes[std::size_t(leader)]->pid();
    QCOMPARE(::kill(pid_t(pid), SIGKILL), 0);
    QVERIFY(m_nodes[std::size_t(leader)]->waitForExit(5'000));
    int next = -1;
    QVERIFY2(waitUntil([&] { return (next = leaderIndex()) >= 0; }, 8'000), "no node took over the lead");
    QVERIFY(next != leader);
    // Every request through nginx is answered by a live node.
    HttpClient client(m_nginx->host(), m_nginx->port());
    for (int i = 0; i < 30; ++i) {
        const HttpResponse nearby = client.get("/api/v1/cars/nearby?lat=57.7&lng=11.97");
        QVERIFY2(nearby.status == 200, qPrintable(nearby.describe()));
    }
    // No acknowledged booking was lost: all still in the database.
    QCOMPARE(m_postgres.psql(QStringLiteral("SELECT count(*) FROM bookings")).trimmed(),
             QString::number(m_acknowledged));
}

// The truth is away: a booking cannot be made durable, so it is refused with a clear 503, while
// the live view (each node's copy) still answers; with PostgreSQL back, bookings resume without
// restarting any node.
void ClusterExactlyOnceTest::withPostgresqlDownBookingsAre503AndReadsGoOn()
{
    ServerProcess *node = nullptr;
    for (auto &n : m_nodes)
        if (n->isRunning())
            node = n.get();
    QVERIFY(node);
    HttpClient client(node->host(), node->port());
    const QByteArray order = R"({"rider_id":"late-rider","pickup":{"lat":57.7,"lng":11.97}})";
    m_postgres.stop();
    const HttpResponse refused = client.post("/api/v1/bookings", order);
    QVERIFY2(refused.status == 503, qPrintable(refused.describe()));
    QCOMPARE(refused.json().value(QStringLiteral("error")).toString(), QStringLiteral("ledger_unavailable"));
    // Where the operator keeps the database is nobody's business outside: not in a rider's answer.
    const QString told = refused.json().value(QStringLiteral("message")).toString();
    QVERIFY2(!told.contains(QString::number(m_postgres.port())) && !told.contains(QLatin1String("127.0.0.1")),
             qPrintable(told));
    const HttpResponse nearby = client.get("/api/v1/cars/nearby?lat=57.7&lng=11.97");
    QVERIFY2(nearby.status == 200, qPrintable(nearby.describe()));
    QVERIFY2(m_postgres.start(), qPrintable(m_postgres.error()));
    HttpResponse booked;
    QVERIFY2(waitUntil(
                 [&] {
                     booked = client.post("/api/v1/bookings", order);
                     return booked.status == 201;
                 },
                 15'000),
             qPrintable(booked.describe()));
}

// One rider's booking sent to every node still up at once (a client retrying on a timeout while its first
// try still runs, behind a proxy that spreads the tries): the ledger's commit lets one booking per
// Idempotency-Key through, and every answer is that booking, with its rider token.
void ClusterExactlyOnceTest::oneKeySentToEveryNodeAtOnceMakesOneBooking()
{
    constexpr int kTriesPerNode = 4;
    const QJsonObject order{{"rider_id", "rider-keyed"}, {"pickup", QJsonObject{{"lat", 57.7046}, {"lng", 11.9668}}}};
    const QByteArray request =
        formatRequest("POST", "/api/v1/bookings", bookingBody(order), {{kIdempotencyKeyHeader, freshIdempotencyKey()}});
    const int freeBefore = freeCarsInTheDatabase();
    // Each node's tries from a thread of its own, so they reach the nodes at the same time.
    std::vector<const ServerProcess *> running;
    for (const auto &node : m_nodes)
        if (node->isRunning())
            running.push_back(node.get());
    QVERIFY(running.size() >= 2);
    std::vector<QList<HttpResponse>> perNode(running.size());
    std::vector<std::unique_ptr<QThread>> senders;
    for (std::size_t i = 0; i < running.size(); ++i) {
        const ServerProcess &node = *running[i];
        senders.emplace_back(QThread::create([&, i, host = node.host(), port = node.port()] {
            perNode[i] = sendConcurrently(host, port, QList<QByteArray>(kTriesPerNode, request), kBurstTimeoutMs);
        }));
        senders.back()->start();
    }
    for (auto &sender : senders)
        QVERIFY(sender->wait(kBurstTimeoutMs + 5000));
    QList<HttpResponse> answers;
    for (const auto &some : perNode)
        answers += some;
    const KeyedBurst burst = summarizeBurst(answers);
    QVERIFY2(burst.unexpected.isEmpty(), burst.describe().constData());
    QVERIFY2(burst.bookingIds.size() == 1 && burst.riderTokens.size() == 1, burst.describe().constData());
    QVERIFY2(burst.created == 1 && burst.replayed == int(running.size()) * kTriesPerNode - 1,
             burst.describe().constData());
    QCOMPARE(m_postgres.psql(QStringLiteral("SELECT count(*) FROM bookings WHERE rider_id = 'rider-keyed'")).trimmed(),
             QStringLiteral("1"));
    QCOMPARE(freeCarsInTheDatabase(), freeBefore - 1); // the losers' cars were freed again
    ++m_acknowledged;

    // Cancelled again, so the cases below find the cars as before.
    const HttpResponse any = answers.first();
    HttpClient client(m_nginx->host(), m_nginx->port());
    const HttpResponse cancelled =
        client.request("POST", "/api/v1/bookings/" + QByteArray::number(bookingIdOf(any)) + "/cancel", {},
                       {{"Authorization", "Bearer " + any.json().value("rider_token").toString().toLatin1()}});
    QVERIFY2(cancelled.status == 200, qPrintable(cancelled.describe()));
    QCOMPARE(freeCarsInTheDatabase(), freeBefore);
}

void ClusterExactlyOnceTest::cleanupTestCase()
{
    if (m_nginx)
        m_nginx->stop();
    for (auto &node : m_nodes)
        node->stop();
    m_redis.stop();
    m_postgres.stop();
}

QTEST_GUILESS_MAIN(ClusterExactlyOnceTest)
#include "cluster_exactly_once_test.moc"
