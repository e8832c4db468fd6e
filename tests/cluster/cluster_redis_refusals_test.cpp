// When Redis does not take a node's writes (the unlucky operator, issue 17): a real redis-server
// made full with `CONFIG SET maxmemory 1` (then it answers every write "-OOM command not
// allowed"), and restarted empty. A node's fleet copy (cluster/ClusterFleet) keeps the live view
// taxicore:cars whole: a move Redis refused reaches the view once Redis has room again, without
// another move, and a view lost with a restart is written again from the copy. The node list
// (cluster/NodeDirectory) names a refused heartbeat instead of letting the node go stale unexplained.
#include "FleetLine.h"
#include "FleetNodes.h"
#include "PostgresKit.h"
#include "RedisKit.h"
#include "RequireTool.h"
#include "Wait.h"

#include "cluster/ClusterFleet.h"
#include "cluster/FleetDelta.h"
#include "cluster/NodeDirectory.h"
#include "redis/RedisClient.h"
#include "redis/RedisEndpoint.h"

#include <QTest>
#include <memory>

using namespace taxicore;
using namespace taxicore::test;

namespace {

constexpr int kCars = 3;
constexpr int kMovedCar = 2;
// Redis' answers and the repair (every LiveViewWriter::kRepairGapMs) on a loaded 2-core machine, with a margin.
constexpr int kRedisTimeoutMs = 10'000;
constexpr int kReplyTimeoutMs = 2000;

// Moves kMovedCar `metres` east of its start; where the copy holds it now.
LatLng moveCar(ClusterFleet &fleet, double metres)
{
    const LatLng start = placeNorth(kMovedCar);
    const auto moved = fleet.updatePosition(kMovedCar, {start.lat, start.lng + metres / 60'000.0}, 90, 20, false);
    return moved ? moved->position : LatLng{};
}

} // namespace

class ClusterRedisRefusalsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void aMoveRedisRefusedReachesTheLiveViewOnceRedisHasRoom();
    void aLiveViewLostWithARestartIsWrittenAgainFromTheCopy();
    void aHeartbeatRedisRefusesIsNamedInTheNodeList();
    void cleanup();

private:
    // Car `id` as the live view in Redis holds it; none when it is not there.
    std::optional<CarSnapshot> inLiveView(int id);
    bool liveViewHolds(int id, LatLng position);
    qint64 liveViewSize();
    void setRedisFull(bool full);

    PostgresKit m_postgres;
    RedisKit m_redis;
    std::unique_ptr<redis::RedisClient> m_client;
    FleetNode m_node;
};

void ClusterRedisRefusalsTest::initTestCase()
{
    TC_REQUIRE_TOOL(!PostgresKit::binDir().isEmpty(), "PostgreSQL is not installed (package postgresql)");
    TC_REQUIRE_TOOL(!RedisKit::program().isEmpty(), "redis-server is not installed (package redis-server)");
    QVERIFY2(m_postgres.start(), qPrintable(m_postgres.error()));
    QString error;
    QVERIFY2(m_redis.start({}, &error), qPrintable(error));
    m_client = std::make_unique<redis::RedisClient>(*redis::parseRedisUrl(m_redis.url(), nullptr));
    m_node = openFleetNode(m_redis.url(), m_postgres.url(), 1, kCars);
    QVERIFY(m_node.fleet);
}

void ClusterRedisRefusalsTest::cleanup()
{
    setRedisFull(false); // a failed test leaves the next one a Redis with room
}

std::optional<CarSnapshot> ClusterRedisRefusalsTest::inLiveView(int id)
{
    const redis::RedisReply reply = m_client->commandAndWait(
        {"HGET", ClusterFleet::kCarsKey, QByteArray::number(id)}, kReplyTimeoutMs);
    if (reply.type != redis::RedisReply::Type::String)
        return std::nullopt;
    return decodeCar(reply.text);
}

bool ClusterRedisRefusalsTest::liveViewHolds(int id, LatLng position)
{
    const auto car = inLiveView(id);
    return car && qFuzzyCompare(car->position.lat, position.lat) && qFuzzyCompare(car->position.lng, position.lng);
}

qint64 ClusterRedisRefusalsTest::liveViewSize()
{
    const redis::RedisReply reply = m_client->commandAndWait({"HLEN", ClusterFleet::kCarsKey}, kReplyTimeoutMs);
    return reply.type == redis::RedisReply::Type::Integer ? reply.integer : -1;
}

void ClusterRedisRefusalsTest::setRedisFull(bool full)
{
    // maxmemory 1 byte: Redis uses more than that already, so with the default policy
    // (noeviction) it refuses every command that may add memory; 0 lifts the limit.
    const QByteArray answer = m_redis.rawCommand(full ? "CONFIG SET maxmemory 1" : "CONFIG SET maxmemory 0");
    QVERIFY2(answer.startsWith("+OK"), answer.constData());
}

void ClusterRedisRefusalsTest::aMoveRedisRefusedReachesTheLiveViewOnceRedisHasRoom()
{
    ClusterFleet &fleet = *m_node.fleet;
    const LatLng before = moveCar(fleet, 50);
    QVERIFY2(waitUntil([&] { return liveViewHolds(kMovedCar, before); }, kRedisTimeoutMs),
             "a move never reached the live view while Redis had room");

    setRedisFull(true);
    QVERIFY2(m_redis.rawCommand("SET probe 1").startsWith("-OOM"), "Redis still takes writes: the test proves nothing");
    const quint64 missedBefore = fleet.stats().liveViewMissed;
    const LatLng during = moveCar(fleet, 150);
    QVERIFY2(waitUntil([&] { return fleet.stats().liveViewMissed > missedBefore; }, kRedisTimeoutMs),
             "the write Redis refused was not counted");
    QVERIFY2(liveViewHolds(kMovedCar, before), "Redis took the write although it was full");

    setRedisFull(false);
    // No move after this: the copy's position is written again by itself.
    QVERIFY2(waitUntil([&] { return liveViewHolds(kMovedCar, during); }, kRedisTimeoutMs),
             "the move Redis refused never reached the live view after Redis had room again");
    QVERIFY(fleet.stats().liveViewRepaired >= 1);
}

void ClusterRedisRefusalsTest::aLiveViewLostWithARestartIsWrittenAgainFromTheCopy()
{
    ClusterFleet &fleet = *m_node.fleet;
    const LatLng moved = moveCar(fleet, 250);
    QVERIFY(waitUntil([&] { return liveViewHolds(kMovedCar, moved); }, kRedisTimeoutMs));

    QString error;
    QVERIFY2(m_redis.restart(&error), qPrintable(error)); // no persistence: it comes back empty
    // The node resubscribes, finds the view without its cars, and writes them (nothing moves here).
    QVERIFY2(waitUntil([&] { return liveViewSize() == kCars; }, kRedisTimeoutMs),
             qPrintable(QStringLiteral("the live view holds %1 of %2 cars after Redis restarted")
                            .arg(liveViewSize())
                            .arg(kCars)));
    QVERIFY2(liveViewHolds(kMovedCar, moved), "the view was written again, but not with the copy's position");
}

void ClusterRedisRefusalsTest::aHeartbeatRedisRefusesIsNamedInTheNodeList()
{
    NodeDirectory directory({QStringLiteral("refusals-node"), QStringLiteral("http://127.0.0.1:1")}, m_redis.url(),
                            [] {
                                NodeStatus status;
                                status.mode = QStringLiteral("single");
                                return status;
                            });
    const auto directoryError = [&] { return directory.snapshot().value(QStringLiteral("directory_error")).toString(); };
    const int beatsTimeoutMs = 5 * NodeDirectory::kHeartbeatMs + kRedisTimeoutMs;
    QVERIFY2(waitUntil(
                 [&] {
                     const redis::RedisReply entry =
                         m_client->commandAndWait({"HEXISTS", NodeDirectory::kHashKey, "refusals-node"}, kReplyTimeoutMs);
                     return entry.integer == 1 && directoryError().isEmpty();
                 },
                 beatsTimeoutMs),
             "the node's heartbeat never reached Redis");

    setRedisFull(true);
    QVERIFY2(waitUntil([&] { return directoryError().contains(QStringLiteral("OOM")); }, beatsTimeoutMs),
             qPrintable(QStringLiteral("with Redis full the node list says: '%1'").arg(directoryError())));
    QVERIFY2(directoryError().contains(QStringLiteral("heartbeat")), qPrintable(directoryError()));

    setRedisFull(false);
    QVERIFY2(waitUntil([&] { return directoryError().isEmpty(); }, beatsTimeoutMs),
             qPrintable(QStringLiteral("Redis has room again, and the node list still says: '%1'").arg(directoryError())));
}

QTEST_GUILESS_MAIN(ClusterRedisRefusalsTest)
#include "cluster_redis_refusals_test.moc"
