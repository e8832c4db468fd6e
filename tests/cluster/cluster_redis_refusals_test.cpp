// When Redis does not take a node's writes (the unlucky operator, issue 17): a real redis-server
// made full with `CONFIG SET maxmemory 1` (then it answers every write "-OOM command not
// allowed"), paused past a command's timeout, restarted empty, and its live view deleted. A node's
// fleet copy (cluster/ClusterFleet) keeps the live view taxicore:cars whole: a move Redis refused
// or never answered reaches the view once Redis takes writes again, without another move, and a
// view lost with a restart or a deletion is written again from the copy. The node list
// (cluster/NodeDirectory) names a refused heartbeat instead of letting the node go stale unexplained.
#include "FleetLine.h"
#include "FleetNodes.h"
#include "RedisKit.h"
#include "RequireTool.h"
#include "Wait.h"

#include "cluster/ClusterFleet.h"
#include "cluster/FleetDelta.h"
#include "cluster/NodeDirectory.h"
#include "redis/RedisClient.h"
#include "redis/RedisEndpoint.h"
#include "region/SharedRegion.h"

#include <QRegularExpression>
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
// The node's resync (and with it the check of the view) this often, as a server's every 30 s.
constexpr int kResyncMs = 300;

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
    void aMoveRedisNeverAnsweredReachesTheLiveViewOnceItIsBack();
    void aLiveViewLostWithARestartIsWrittenAgainFromTheCopy();
    void aLiveViewDeletedWithoutAReconnectIsWrittenAgainAtTheResync();
    void aHeartbeatRedisRefusesIsNamedInTheNodeList();
    void cleanup();
    void cleanupTestCase();

private:
    // Car `id` as the live view in Redis holds it; none when it is not there.
    std::optional<CarSnapshot> inLiveView(int id);
    bool liveViewHolds(int id, LatLng position);
    qint64 liveViewSize();
    void setRedisFull(bool full);

    RedisKit m_redis;
    std::unique_ptr<redis::RedisClient> m_client;
    std::unique_ptr<SharedRegion> m_region;
    std::unique_ptr<ClusterFleet> m_fleet;
};

void ClusterRedisRefusalsTest::initTestCase()
{
    TC_REQUIRE_TOOL(!RedisKit::program().isEmpty(), "redis-server is not installed (package redis-server)");
    QString error;
    QVERIFY2(m_redis.start({}, &error), qPrintable(error));
    m_client = std::make_unique<redis::RedisClient>(*redis::parseRedisUrl(m_redis.url(), nullptr));
    m_region = SharedRegion::create(error);
    QVERIFY2(m_region, qPrintable(error));
    ClusterFleet::Options options{m_redis.url(), kUnusedLedgerUrl, true, 1};
    options.resyncMs = kResyncMs;
    m_fleet = ClusterFleet::open(*m_region, options, &error);
    QVERIFY2(m_fleet, qPrintable(error));
    m_fleet->initialiseCars(kCars, placeNorth);
    m_fleet->setResync([](ClusterFleet &) {}); // the bookings' part of a resync needs a ledger
    // A new cluster's view starts empty: the node writes its cars.
    QVERIFY2(waitUntil([&] { return liveViewSize() == kCars; }, kRedisTimeoutMs), "a new node never wrote its cars");
}

void ClusterRedisRefusalsTest::cleanup()
{
    m_redis.resume();
    setRedisFull(false); // a failed test leaves the next one a Redis with room
}

void ClusterRedisRefusalsTest::cleanupTestCase()
{
    if (m_fleet)
        m_fleet->setResync({});
    m_fleet.reset();
}

std::optional<CarSnapshot> ClusterRedisRefusalsTest::inLiveView(int id)
{
    const redis::RedisReply reply =
        m_client->commandAndWait({"HGET", ClusterFleet::kCarsKey, QByteArray::number(id)}, kReplyTimeoutMs);
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
    ClusterFleet &fleet = *m_fleet;
    const LatLng before = moveCar(fleet, 50);
    QVERIFY2(waitUntil([&] { return liveViewHolds(kMovedCar, before); }, kRedisTimeoutMs),
             "a move never reached the live view while Redis had room");

    setRedisFull(true);
    QVERIFY2(m_redis.rawCommand("SET probe 1").startsWith("-OOM"), "Redis still takes writes: the test proves nothing");
    const ClusterFleet::Stats statsBefore = fleet.stats();
    // Said once, in Redis' words, however many writes Redis refuses.
    const QRegularExpression refused(QStringLiteral("Redis did not take .* live view taxicore:cars \\(OOM"));
    QTest::ignoreMessage(QtWarningMsg, refused);
    QTest::failOnWarning(refused);
    for (int metres = 100; metres < 150; metres += 10) {
        moveCar(fleet, metres);
        QTest::qWait(ClusterFleet::kMaxHoldMs * 4); // each in a batch of its own
    }
    const LatLng during = moveCar(fleet, 150);
    QVERIFY2(waitUntil([&] { return fleet.stats().liveViewMissed > statsBefore.liveViewMissed; }, kRedisTimeoutMs),
             "the write Redis refused was not counted");
    QVERIFY2(liveViewHolds(kMovedCar, before), "Redis took the write although it was full");

    setRedisFull(false);
    // No move after this: the copy's position is written again by itself.
    QVERIFY2(waitUntil([&] { return liveViewHolds(kMovedCar, during); }, kRedisTimeoutMs),
             "the move Redis refused never reached the live view after Redis had room again");
    // Counted when Redis' reply comes back, which may be just after the write is visible there.
    QVERIFY2(waitUntil([&] { return fleet.stats().liveViewRepaired > statsBefore.liveViewRepaired; }, kRedisTimeoutMs),
             "the position reached the live view, but not as a repair");
}

void ClusterRedisRefusalsTest::aMoveRedisNeverAnsweredReachesTheLiveViewOnceItIsBack()
{
    ClusterFleet &fleet = *m_fleet;
    const quint64 missedBefore = fleet.stats().liveViewMissed;
    QVERIFY(m_redis.pause()); // a stuck server: the command waits, then fails on this side
    const LatLng during = moveCar(fleet, 350);
    QVERIFY2(waitUntil([&] { return fleet.stats().liveViewMissed > missedBefore; }, kRedisTimeoutMs),
             "a write Redis never answered was not counted");
    QVERIFY(m_redis.resume());
    QVERIFY2(waitUntil([&] { return liveViewHolds(kMovedCar, during); }, kRedisTimeoutMs),
             "the move made while Redis was stuck never reached the live view");
}

void ClusterRedisRefusalsTest::aLiveViewLostWithARestartIsWrittenAgainFromTheCopy()
{
    ClusterFleet &fleet = *m_fleet;
    const LatLng moved = moveCar(fleet, 250);
    QVERIFY(waitUntil([&] { return liveViewHolds(kMovedCar, moved); }, kRedisTimeoutMs));

    QString error;
    QVERIFY2(m_redis.restart(&error), qPrintable(error)); // no persistence: it comes back empty
    // The node resubscribes, finds the view without its cars, and writes them (nothing moves here).
    QVERIFY2(
        waitUntil([&] { return liveViewSize() == kCars; }, kRedisTimeoutMs),
        qPrintable(
            QStringLiteral("the live view holds %1 of %2 cars after Redis restarted").arg(liveViewSize()).arg(kCars)));
    QVERIFY2(liveViewHolds(kMovedCar, moved), "the view was written again, but not with the copy's position");
}

void ClusterRedisRefusalsTest::aLiveViewDeletedWithoutAReconnectIsWrittenAgainAtTheResync()
{
    const LatLng moved = moveCar(*m_fleet, 450);
    QVERIFY(waitUntil([&] { return liveViewHolds(kMovedCar, moved); }, kRedisTimeoutMs));
    // As FLUSHALL or an eviction would: no connection drops, so no resubscribe tells the node.
    QVERIFY(m_redis.rawCommand("DEL taxicore:cars").startsWith(":1"));
    QVERIFY2(
        waitUntil([&] { return liveViewSize() == kCars; }, kRedisTimeoutMs),
        qPrintable(
            QStringLiteral("the live view holds %1 of %2 cars after it was deleted").arg(liveViewSize()).arg(kCars)));
    QVERIFY(liveViewHolds(kMovedCar, moved));
}

void ClusterRedisRefusalsTest::aHeartbeatRedisRefusesIsNamedInTheNodeList()
{
    NodeDirectory directory({QStringLiteral("refusals-node"), QStringLiteral("http://127.0.0.1:1")}, m_redis.url(), [] {
        NodeStatus status;
        status.mode = QStringLiteral("single");
        return status;
    });
    const auto directoryError = [&] {
        return directory.snapshot().value(QStringLiteral("directory_error")).toString();
    };
    const int beatsTimeoutMs = 5 * NodeDirectory::kHeartbeatMs + kRedisTimeoutMs;
    QVERIFY2(waitUntil(
                 [&] {
                     const redis::RedisReply entry = m_client->commandAndWait(
                         {"HEXISTS", NodeDirectory::kHashKey, "refusals-node"}, kReplyTimeoutMs);
                     return entry.integer == 1 && directoryError().isEmpty();
                 },
                 beatsTimeoutMs),
             "the node's heartbeat never reached Redis");

    setRedisFull(true);
    QVERIFY2(waitUntil([&] { return directoryError().contains(QStringLiteral("OOM")); }, beatsTimeoutMs),
             qPrintable(QStringLiteral("with Redis full the node list says: '%1'").arg(directoryError())));
    QVERIFY2(directoryError().contains(QStringLiteral("heartbeat")), qPrintable(directoryError()));

    setRedisFull(false);
    QVERIFY2(
        waitUntil([&] { return directoryError().isEmpty(); }, beatsTimeoutMs),
        qPrintable(QStringLiteral("Redis has room again, and the node list still says: '%1'").arg(directoryError())));
}

QTEST_GUILESS_MAIN(ClusterRedisRefusalsTest)
#include "cluster_redis_refusals_test.moc"
