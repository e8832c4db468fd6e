// A car's `updated_ms` is also its version across a cluster's fleet copies: a copy applies a
// remote position only if it is not older than the one it holds (SharedMemoryFleet::
// applyRemotePosition). The version must follow the writes, not the writers' wall clocks: a node
// whose clock is behind another's (or was stepped back) must still write versions the others
// take. Two fleets in one process stand for two nodes' copies; a position stamped 60 s ahead
// stands for a third node whose clock runs ahead. (tests/cluster/cluster_car_versions_test.cpp
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

Copy openCopy()
{
    Copy copy;
    QString error;
    copy.region = SharedRegion::create(error);
    if (!copy.region)
        qFatal("cannot create a region: %s", qPrintable(error));
    copy.fleet = std::make_unique<SharedMemoryFleet>(*copy.region);
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

QTEST_GUILESS_MAIN(CarVersionsTest)
#include "server_car_versions_test.moc"
