// In a cluster, a car's `updated_ms` is also its version across the nodes' fleet copies: a copy
// applies a remote position only if it is not older than the one it holds (SharedMemoryFleet::
// applyRemotePosition). The version must follow the writes, not the writers' wall clocks: a node
// whose clock is behind another's (or was stepped back) must still write versions the others
// take, and a copy's start positions must give way to the fleet's. Two fleets in one process
// stand for two nodes' copies; a position stamped 60 s ahead stands for a third node whose clock
// runs ahead, or for a write made before this host's clock stepped back. A fleet alone (the
// embedded default) keeps the wall clock of each write. (tests/cluster/cluster_car_versions_test
// steps a real node's clock.)

#include "fleet/SharedMemoryFleet.h"
#include "region/Clock.h"
#include "region/SharedRegion.h"

#include <QTest>
#include <memory>

using namespace taxicore;

namespace {

constexpr int kCars = 3;
constexpr int64_t kAheadMs = 60'000;

LatLng placeOf(int id)
{
    return {57.70 + id * 0.001, 11.97};
}

struct Copy {
    std::unique_ptr<SharedRegion> region;
    std::unique_ptr<SharedMemoryFleet> fleet;
};

// A cluster node's copy, or (`clusterCopy` false) a fleet alone.
Copy openCopy(bool clusterCopy = true)
{
    Copy copy;
    QString error;
    copy.region = SharedRegion::create(error);
    if (!copy.region)
        qFatal("cannot create a region: %s", qPrintable(error));
    copy.fleet = std::make_unique<SharedMemoryFleet>(*copy.region);
    if (clusterCopy)
        copy.fleet->versionPositionsAcrossCopies();
    copy.fleet->initialiseCars(kCars, placeOf);
    return copy;
}

} // namespace

class CarVersionsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aWriteAfterANewerRemoteStampIsNewerStill();
    void aCopyWithAClockBehindIsHeardByTheOthers();
    void withAgreeingClocksTheVersionIsTheWallClock();
    void anOlderRemotePositionIsStillDropped();
    void aCopysStartPositionsGiveWayToTheFleets();
    void aFleetAloneStampsTheWallClock();
};

// Car 1's last position came from a node whose clock is 60 s ahead; this node then moves the car.
// The move's stamp must be above the one it replaces, or it would be older than what it follows.
void CarVersionsTest::aWriteAfterANewerRemoteStampIsNewerStill()
{
    Copy a = openCopy();
    CarSnapshot ahead = *a.fleet->car(1);
    ahead.position = {57.71, 11.98};
    ahead.updatedMs = clock::wallMs() + kAheadMs;
    a.fleet->applyRemotePosition(ahead);
    QCOMPARE(a.fleet->car(1)->updatedMs, ahead.updatedMs);

    const auto moved = a.fleet->updatePosition(1, {57.72, 11.99}, 0, 0, true);
    QVERIFY(moved);
    QVERIFY2(a.fleet->car(1)->updatedMs > ahead.updatedMs,
             qPrintable(QStringLiteral("the move is stamped %1, below the %2 it replaced")
                            .arg(a.fleet->car(1)->updatedMs)
                            .arg(ahead.updatedMs)));
}

// Two copies both hold car 1's position from the node ahead. A device report through copy A (whose
// clock is behind that node's) reaches copy B as A's snapshot: B must take it.
void CarVersionsTest::aCopyWithAClockBehindIsHeardByTheOthers()
{
    Copy a = openCopy();
    Copy b = openCopy();
    CarSnapshot ahead = *a.fleet->car(1);
    ahead.position = {57.71, 11.98};
    ahead.updatedMs = clock::wallMs() + kAheadMs;
    a.fleet->applyRemotePosition(ahead);
    b.fleet->applyRemotePosition(ahead);

    const LatLng reported{57.72, 11.99};
    QVERIFY(a.fleet->updatePosition(1, reported, 90, 30, true));
    b.fleet->applyRemotePosition(*a.fleet->car(1));
    const CarSnapshot seen = *b.fleet->car(1);
    QVERIFY2(seen.position.lat == reported.lat && seen.position.lng == reported.lng,
             qPrintable(QStringLiteral("copy B still shows %1,%2: it dropped A's report as older")
                            .arg(seen.position.lat, 0, 'f', 6)
                            .arg(seen.position.lng, 0, 'f', 6)));
}

// The version is still the time a position was written when no clock is ahead of this one.
void CarVersionsTest::withAgreeingClocksTheVersionIsTheWallClock()
{
    Copy a = openCopy();
    QTest::qWait(5); // past the millisecond the cars were placed in
    const int64_t before = clock::wallMs();
    QVERIFY(a.fleet->updatePosition(2, {57.705, 11.975}, 0, 0, true));
    const int64_t after = clock::wallMs();
    const int64_t stamped = a.fleet->car(2)->updatedMs;
    QVERIFY2(stamped >= before && stamped <= after,
             qPrintable(QStringLiteral("stamped %1, written between %2 and %3").arg(stamped).arg(before).arg(after)));
}

// Order still holds: a position older than the one a copy has is not applied.
void CarVersionsTest::anOlderRemotePositionIsStillDropped()
{
    Copy a = openCopy();
    QVERIFY(a.fleet->updatePosition(3, {57.703, 11.973}, 0, 0, true));
    CarSnapshot older = *a.fleet->car(3);
    older.position = {57.70, 11.90};
    older.updatedMs -= 1;
    a.fleet->applyRemotePosition(older);
    QCOMPARE(a.fleet->car(3)->position.lng, 11.973);
}

// A node starts with placeholder positions; the fleet's, moved a minute ago by a node whose clock
// is behind this one's, must replace them.
void CarVersionsTest::aCopysStartPositionsGiveWayToTheFleets()
{
    Copy a = openCopy();
    CarSnapshot moved = *a.fleet->car(2);
    moved.position = {57.715, 11.985};
    moved.updatedMs = clock::wallMs() - kAheadMs;
    a.fleet->applyRemotePosition(moved);
    QCOMPARE(a.fleet->car(2)->position.lat, moved.position.lat);
}

// Without a cluster the stamp is the time of the write, even below the one it replaces (as after
// the host's clock stepped back): it is shown, and the console judges silent cars by it.
void CarVersionsTest::aFleetAloneStampsTheWallClock()
{
    Copy alone = openCopy(false);
    CarSnapshot before = *alone.fleet->car(1);
    before.updatedMs = clock::wallMs() + kAheadMs;
    alone.fleet->applyRemotePosition(before);
    const int64_t from = clock::wallMs();
    QVERIFY(alone.fleet->updatePosition(1, {57.706, 11.976}, 0, 0, true));
    const int64_t stamped = alone.fleet->car(1)->updatedMs;
    QVERIFY2(stamped >= from && stamped <= clock::wallMs(),
             qPrintable(QStringLiteral("stamped %1, %2 ms from the wall clock").arg(stamped).arg(stamped - from)));
}

QTEST_GUILESS_MAIN(CarVersionsTest)
#include "server_car_versions_test.moc"
