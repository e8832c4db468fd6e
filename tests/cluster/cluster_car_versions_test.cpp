// A clock step on the node that moves the cars (issue 17, the unlucky operator): two real nodes on
// one PostgreSQL and one Redis; node one leads, so its simulator moves the fleet and node two
// shows the moves it hears. Node one's wall clock (libfaketime, read from a file) is then stepped
// an hour back. A car's updated_ms is also its version across the copies, so on the old code node
// two dropped every later move as an hour older than what it held: the whole fleet stood still
// there. The cars must keep moving on node two.

#include "FakeClock.h"
#include "HttpClient.h"
#include "NodeListKit.h"
#include "PostgresKit.h"
#include "RedisKit.h"
#include "RequireTool.h"
#include "ServerProcess.h"
#include "Wait.h"

#include <QDateTime>
#include <QJsonArray>
#include <QMap>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

using namespace taxicore::test;

namespace {

constexpr int kCars = 20;
constexpr int kMovedWithinMs = 8000;
constexpr int kLeadsWithinMs = 15'000;
// libfaketime rereads the offset file at most once a second: a few seconds under load.
constexpr int kClockStepWithinMs = 10'000;

// Every car's position on `node` (a nearby search wide enough for the whole fleet).
QMap<int, QPair<double, double>> positionsOn(const ServerProcess &node)
{
    HttpClient client(node.host(), node.port());
    const HttpResponse answer =
        client.request("GET", "/api/v1/cars/nearby?lat=57.7000&lng=11.9700&radius_m=20000&limit=100");
    QMap<int, QPair<double, double>> positions;
    for (const QJsonValue car : answer.json().value(QStringLiteral("cars")).toArray()) {
        const QJsonObject c = car.toObject();
        positions.insert(c.value(QStringLiteral("id")).toInt(),
                         {c.value(QStringLiteral("lat")).toDouble(), c.value(QStringLiteral("lng")).toDouble()});
    }
    return positions;
}

int carsMovedSince(const QMap<int, QPair<double, double>> &before, const QMap<int, QPair<double, double>> &now)
{
    int moved = 0;
    for (auto it = now.cbegin(); it != now.cend(); ++it)
        moved += before.contains(it.key()) && before.value(it.key()) != it.value();
    return moved;
}

} // namespace

class ClusterCarVersionsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void carsKeepMovingAfterTheLeadersClockStepsBack();
    void cleanupTestCase();

private:
    std::unique_ptr<ServerProcess> startNode(const QString &name, const QStringList &environment);

    PostgresKit m_postgres;
    RedisKit m_redis;
    QTemporaryDir m_clockDir;
    std::unique_ptr<ServerProcess> m_one;
    std::unique_ptr<ServerProcess> m_two;
};

std::unique_ptr<ServerProcess> ClusterCarVersionsTest::startNode(const QString &name, const QStringList &environment)
{
    auto node = std::make_unique<ServerProcess>(QStringList{
        QStringLiteral("--node-name"), name, QStringLiteral("--cars"), QString::number(kCars),
        QStringLiteral("--ledger"), m_postgres.url(), QStringLiteral("--fleet"), m_redis.url(),
        QStringLiteral("--demand-rate"), QStringLiteral("0"), QStringLiteral("--mode"), QStringLiteral("single")});
    if (!environment.isEmpty())
        node->setEnvironment(environment);
    if (!node->start(30'000))
        qWarning().noquote() << "node did not start:" << node->error() << node->stderrText();
    return node;
}

void ClusterCarVersionsTest::initTestCase()
{
    TC_REQUIRE_TOOL(!PostgresKit::binDir().isEmpty(), "PostgreSQL is not installed (package postgresql)");
    TC_REQUIRE_TOOL(!RedisKit::program().isEmpty(), "redis-server is not installed (package redis-server)");
    TC_REQUIRE_TOOL(fakeTimeAvailable(), "libfaketime is not installed (package faketime)");
    QVERIFY(m_clockDir.isValid());
    QVERIFY2(m_postgres.start(), qPrintable(m_postgres.error()));
    QString error;
    QVERIFY2(m_redis.start({}, &error), qPrintable(error));
}

void ClusterCarVersionsTest::carsKeepMovingAfterTheLeadersClockStepsBack()
{
    const QString offsetFile = m_clockDir.filePath(QStringLiteral("offset"));
    QVERIFY(setWallClockOffset(offsetFile, 0));
    m_one = startNode(QStringLiteral("node-one"), steppableWallClock(offsetFile));
    QVERIFY2(m_one->isRunning(), qPrintable(m_one->stderrText()));
    QVERIFY2(waitUntil([&] { return leaderOf(clusterOf(*m_one)) == QStringLiteral("node-one"); }, kLeadsWithinMs),
             "node one never led");
    m_two = startNode(QStringLiteral("node-two"), {});
    QVERIFY2(m_two->isRunning(), qPrintable(m_two->stderrText()));

    // Before the step: node two shows the leader's moves.
    auto before = positionsOn(*m_two);
    QCOMPARE(before.size(), kCars);
    QVERIFY2(waitUntil([&] { return carsMovedSince(before, positionsOn(*m_two)) > 0; }, kMovedWithinMs),
             "node two never showed a move, before any clock step");

    QVERIFY(setWallClockOffset(offsetFile, -3600));
    // The witness: node one now stamps what it records an hour back. libfaketime reads the file
    // at most once a second, in each thread when it next asks the time: asked until it shows (a
    // fixed 1.5 s wait missed it once under make test-asan).
    HttpClient one(m_one->host(), m_one->port());
    qint64 skewMs = 0;
    int status = 0;
    const bool stepped = waitUntil(
        [&] {
            const HttpResponse recorded = one.request("POST", "/admin/v1/events", R"({"kind":"clock_probe"})");
            status = recorded.status;
            skewMs =
                qint64(recorded.json().value(QStringLiteral("at_ms")).toDouble()) - QDateTime::currentMSecsSinceEpoch();
            return status == 201 && skewMs < -3'000'000;
        },
        kClockStepWithinMs, 250);
    QVERIFY2(stepped,
             qPrintable(QStringLiteral("node one's clock did not step: %1 ms off (HTTP %2)").arg(skewMs).arg(status)));
    QCOMPARE(leaderOf(clusterOf(*m_two)), QStringLiteral("node-one"));
    before = positionsOn(*m_two);
    int moved = 0;
    waitUntil(
        [&] {
            moved = carsMovedSince(before, positionsOn(*m_two));
            return moved >= kCars / 2;
        },
        kMovedWithinMs);
    QVERIFY2(moved >= kCars / 2, qPrintable(QStringLiteral("after node one's clock stepped back an hour, %1 of %2 "
                                                           "cars moved on node two within %3 ms")
                                                .arg(moved)
                                                .arg(kCars)
                                                .arg(kMovedWithinMs)));
    // The moves came from the stepped node: it still leads.
    QCOMPARE(leaderOf(clusterOf(*m_two)), QStringLiteral("node-one"));
}

void ClusterCarVersionsTest::cleanupTestCase()
{
    if (m_two)
        m_two->stop();
    if (m_one)
        m_one->stop();
    m_redis.stop();
    m_postgres.stop();
}

QTEST_GUILESS_MAIN(ClusterCarVersionsTest)
#include "cluster_car_versions_test.moc"
