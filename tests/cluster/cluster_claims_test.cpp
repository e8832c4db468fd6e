// Two cluster nodes' fleet copies (cluster/ClusterFleet) in one process, on a real redis-server
// and PostgreSQL (booking ids): the car a node books is held in the other copies at once, before
// the booking commits, so riders on other nodes are not offered it (a race for it costs a commit's
// wait on the car's row lock and a retry); a withdrawn booking frees it there again, and so does
// the end of the booking once announced; an announced booking brings its price along, and the
// leader's ETAs of committed bookings reach every node. What a node does in one turn of its event
// loop travels as one message (a PUBLISH counted by the Redis server itself).
#include "FleetLine.h"
#include "FleetNodes.h"
#include "PostgresKit.h"
#include "RedisKit.h"
#include "RequireTool.h"
#include "Wait.h"

#include "city/City.h"
#include "cluster/ClusterFleet.h"
#include "pricing/PricingBoard.h"
#include "region/SharedRegion.h"

#include <QEventLoop>
#include <QRegularExpression>
#include <QTest>
#include <QTimer>
#include <memory>

using namespace taxicore;
using namespace taxicore::test;

namespace {

constexpr int kCars = 3;
// The feed's worst delivery time on a loaded 2-core machine, with a wide margin.
constexpr int kFeedTimeoutMs = 5000;
// A claim's hold in the test's watching node (ClusterFleet::kClaimHoldMs in a server: 10 s).
constexpr int kShortClaimHoldMs = 300;

using Node = FleetNode;

} // namespace

class ClusterClaimsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void aBookedCarIsHeldOnTheOtherNodeBeforeItsCommit();
    void aWithdrawnBookingFreesItsCarOnTheOtherNode();
    void theEndOfAnAnnouncedBookingFreesItsCar();
    void anAnnouncedBookingCarriesItsPrice();
    void theLeadersEtaOfACommittedBookingReachesEveryNode();
    void aCarADeviceDrivesThroughOneNodeIsLeftAloneByTheOthersSimulator();
    void theBookingsOfOneTurnTravelAsOneMessage();
    void aMoveIsSnappedOnlyByTheNodeThatMadeIt();
    void aClaimWhoseNodeDiedIsLetGo(); // last: the nodes above keep holding its car

private:
    // PUBLISH commands the Redis server has run (INFO commandstats); -1 if it did not say.
    qint64 publishCalls() const;
    Node openNode(quint64 origin);
    // Until both copies hear each other: a position moved on each reaches the other.
    bool feedsAreUp();

    PostgresKit m_postgres;
    RedisKit m_redis;
    Node m_a;
    Node m_b;
};

Node ClusterClaimsTest::openNode(quint64 origin)
{
    return openFleetNode(m_redis.url(), m_postgres.url(), origin, kCars);
}

bool ClusterClaimsTest::feedsAreUp()
{
    return copiesHearEachOther(*m_a.fleet, *m_b.fleet, kCars); // the farthest car
}

void ClusterClaimsTest::initTestCase()
{
    TC_REQUIRE_TOOL(!PostgresKit::binDir().isEmpty(), "PostgreSQL is not installed (package postgresql)");
    TC_REQUIRE_TOOL(!RedisKit::program().isEmpty(), "redis-server is not installed (package redis-server)");
    QVERIFY2(m_postgres.start(), qPrintable(m_postgres.error()));
    QString error;
    QVERIFY2(m_redis.start({}, &error), qPrintable(error));
    m_a = openNode(1);
    m_b = openNode(2);
    QVERIFY(m_a.fleet && m_b.fleet);
    QVERIFY2(feedsAreUp(), "the two copies never heard each other");
}

void ClusterClaimsTest::aBookedCarIsHeldOnTheOtherNodeBeforeItsCommit()
{
    const auto booked = m_a.fleet->book(QStringLiteral("r1"), kCentre, std::nullopt, 5000, etaByDistance);
    QCOMPARE(booked.result, FleetStore::BookResult::Booked);
    QCOMPARE(booked.booking.carId, 1);
    // Nothing committed or announced yet: only the claim travelled.
    QVERIFY2(waitUntil([&] { return m_b.fleet->car(1)->state != CarState::Available; }, kFeedTimeoutMs),
             "node B still offers the car node A is booking");
    QCOMPARE(m_b.fleet->car(1)->bookingId, uint64_t(0));
    const auto other = m_b.fleet->book(QStringLiteral("r2"), kCentre, std::nullopt, 5000, etaByDistance);
    QCOMPARE(other.result, FleetStore::BookResult::Booked);
    QCOMPARE(other.booking.carId, 2);
    // Leave both nodes as they were: both bookings withdrawn.
    m_a.fleet->withdraw(booked.booking.id);
    m_b.fleet->withdraw(other.booking.id);
    QVERIFY(waitUntil(
        [&] {
            return m_a.fleet->car(2)->state == CarState::Available && m_b.fleet->car(1)->state == CarState::Available;
        },
        kFeedTimeoutMs));
}

// The ledger refused A's booking (the car was claimed elsewhere, or the database was away): A
// withdraws it, and the car it had claimed is offered on B again, without waiting for a resync.
void ClusterClaimsTest::aWithdrawnBookingFreesItsCarOnTheOtherNode()
{
    const auto booked = m_a.fleet->book(QStringLiteral("r3"), kCentre, std::nullopt, 5000, etaByDistance);
    QCOMPARE(booked.booking.carId, 1);
    QVERIFY(waitUntil([&] { return m_b.fleet->car(1)->state != CarState::Available; }, kFeedTimeoutMs));
    m_a.fleet->withdraw(booked.booking.id);
    QCOMPARE(m_a.fleet->car(1)->state, CarState::Available);
    QVERIFY2(waitUntil([&] { return m_b.fleet->car(1)->state == CarState::Available; }, kFeedTimeoutMs),
             "the withdrawn claim still holds the car on node B");
    // Never announced: B has no booking of that id.
    QVERIFY(!m_b.fleet->booking(booked.booking.id));
}

void ClusterClaimsTest::theEndOfAnAnnouncedBookingFreesItsCar()
{
    const auto booked = m_a.fleet->book(QStringLiteral("r4"), kCentre, std::nullopt, 5000, etaByDistance);
    QCOMPARE(booked.booking.carId, 1);
    m_a.fleet->announce(booked.booking.id); // committed
    QVERIFY(waitUntil([&] { return m_b.fleet->car(1)->bookingId == booked.booking.id; }, kFeedTimeoutMs));
    QCOMPARE(m_a.fleet->cancel(booked.booking.id).result, FleetStore::TransitionResult::Done);
    QVERIFY(waitUntil([&] { return m_b.fleet->car(1)->state == CarState::Available; }, kFeedTimeoutMs));
    QCOMPARE(m_b.fleet->booking(booked.booking.id)->state, BookingState::Cancelled);
}

// The rider was quoted a fare on node A; the leader's simulator on node B ends the ride: B must
// know the quote and the surge it was booked at (pricing/PricedRide charges them).
void ClusterClaimsTest::anAnnouncedBookingCarriesItsPrice()
{
    const auto booked = m_a.fleet->book(QStringLiteral("r5"), kCentre, std::nullopt, 5000, etaByDistance);
    QCOMPARE(booked.result, FleetStore::BookResult::Booked);
    BookingPrice price;
    price.surge = 1.7;
    price.hasQuote = true;
    price.quotedDistanceM = 2400;
    price.quotedDurationS = 420;
    price.quote = {45, 60.5, 21, 95, 1.7, 215.5};
    PricingBoard(m_a.fleet->pricing()).recordBookingPrice(booked.booking.id, price);
    m_a.fleet->announce(booked.booking.id);
    const PricingBoard onB(m_b.fleet->pricing());
    QVERIFY2(waitUntil([&] { return onB.bookingPrice(booked.booking.id).has_value(); }, kFeedTimeoutMs),
             "node B does not know the price node A booked at");
    const BookingPrice got = *onB.bookingPrice(booked.booking.id);
    QCOMPARE(got.surge, 1.7);
    QVERIFY(got.hasQuote);
    QCOMPARE(got.quotedDistanceM, 2400.0);
    QCOMPARE(got.quote.total, 215.5);
    QCOMPARE(got.quote.minimum, 95.0);
    QCOMPARE(m_a.fleet->cancel(booked.booking.id).result, FleetStore::TransitionResult::Done);
}

// The simulator runs on the leader; a rider asks another node how far the car is. An ETA travels
// once the booking is committed, when it moved by ClusterFleet::kEtaStepS or more.
void ClusterClaimsTest::theLeadersEtaOfACommittedBookingReachesEveryNode()
{
    const auto booked = m_a.fleet->book(QStringLiteral("r6"), kCentre, std::nullopt, 5000, etaByDistance);
    QCOMPARE(booked.result, FleetStore::BookResult::Booked);
    const uint64_t id = booked.booking.id;
    // Not committed yet: nothing of the booking itself may travel (it could still be withdrawn).
    m_a.fleet->setEta(id, 900);
    QTest::qWait(300);
    QVERIFY(!m_b.fleet->booking(id));
    m_a.fleet->announce(id); // committed
    QVERIFY(waitUntil([&] { return m_b.fleet->booking(id) && m_b.fleet->booking(id)->etaS == 900; }, kFeedTimeoutMs));
    // B leads: its simulator's ETA reaches A, where the rider booked.
    m_b.fleet->setEta(id, 600);
    QVERIFY2(waitUntil([&] { return m_a.fleet->booking(id)->etaS == 600; }, kFeedTimeoutMs),
             "node A never heard the leader's ETA");
    QCOMPARE(m_a.fleet->cancel(id).result, FleetStore::TransitionResult::Done);
    QVERIFY(
        waitUntil([&] { return m_b.fleet->car(booked.booking.carId)->state == CarState::Available; }, kFeedTimeoutMs));
}

// The simulator runs on the leader only and moves every car no device drives; a car's device may
// report through any node (nginx spreads them).
void ClusterClaimsTest::aCarADeviceDrivesThroughOneNodeIsLeftAloneByTheOthersSimulator()
{
    QVERIFY(!m_b.fleet->isDeviceDriven(2));
    m_a.fleet->updatePosition(2, placeNorth(2), 0, 0, true);
    QVERIFY(m_a.fleet->isDeviceDriven(2));
    QVERIFY2(waitUntil([&] { return m_b.fleet->isDeviceDriven(2); }, kFeedTimeoutMs),
             "node B's simulator would go on moving a car a device drives through node A");
}

qint64 ClusterClaimsTest::publishCalls() const
{
    static const QRegularExpression calls(QStringLiteral("cmdstat_publish:calls=(\\d+)"));
    const QString info = QString::fromLatin1(m_redis.rawCommand("INFO commandstats"));
    const auto match = calls.match(info);
    if (info.isEmpty() || !info.contains(QLatin1String("cmdstat_")))
        return -1;
    return match.hasMatch() ? match.captured(1).toLongLong() : 0;
}

// Under load a node books and commits hundreds of rides a second; one message per claim and per
// announcement cost Redis and every node's subscriber more than the bookings themselves. The claims
// and announcements of one turn of the node's event loop go out together, in order, and the other
// node applies them all.
void ClusterClaimsTest::theBookingsOfOneTurnTravelAsOneMessage()
{
    // Booking ids come from PostgreSQL in blocks: the first booking of a node waits for one, and a
    // turn that lasts longer than ClusterFleet::kMaxHoldMs sends what it has so far. Take the
    // block first, so the burst below is one short turn.
    const auto warm = m_a.fleet->book(QStringLiteral("warm"), kCentre, std::nullopt, 5000, etaByDistance);
    QCOMPARE(warm.result, FleetStore::BookResult::Booked);
    m_a.fleet->withdraw(warm.booking.id);
    QVERIFY(
        waitUntil([&] { return m_b.fleet->car(warm.booking.carId)->state == CarState::Available; }, kFeedTimeoutMs));
    QTest::qWait(100); // the feed is quiet: the earlier messages are out
    const qint64 before = publishCalls();
    QVERIFY2(before >= 0, "the Redis server did not answer INFO commandstats");
    std::vector<uint64_t> ids;
    // In a running event loop, as a node's handlers run (without one, every change is sent at once).
    QEventLoop turn;
    QTimer::singleShot(0, &turn, [&] {
        for (int i = 0; i < kCars; ++i) {
            const auto booked =
                m_a.fleet->book(QStringLiteral("burst-%1").arg(i), kCentre, std::nullopt, 5000, etaByDistance);
            if (booked.result != FleetStore::BookResult::Booked)
                break;
            m_a.fleet->announce(booked.booking.id); // committed
            ids.push_back(booked.booking.id);
        }
        turn.quit();
    });
    turn.exec();
    QVERIFY2(waitUntil(
                 [&] {
                     if (ids.size() != std::size_t(kCars))
                         return false;
                     for (const uint64_t id : ids) {
                         const auto there = m_b.fleet->booking(id);
                         if (!there || m_b.fleet->car(there->carId)->bookingId != id)
                             return false;
                     }
                     return true;
                 },
                 kFeedTimeoutMs),
             "node B did not get every booking of the burst");
    QCOMPARE(publishCalls() - before, qint64(1)); // 3 claims + 3 announcements: one PUBLISH
    for (const uint64_t id : ids)
        QCOMPARE(m_a.fleet->cancel(id).result, FleetStore::TransitionResult::Done);
    QVERIFY(waitUntil(
        [&] {
            for (int car = 1; car <= kCars; ++car)
                if (m_b.fleet->car(car)->state != CarState::Available)
                    return false;
            return true;
        },
        kFeedTimeoutMs));
}

// Both nodes on the same city file: node B stores the road place node A located a move at, and
// does not snap the position again (ClusterFleet::Stats::placesAsSent counts it).
void ClusterClaimsTest::aMoveIsSnappedOnlyByTheNodeThatMadeIt()
{
    const auto loaded = city::City::load(QStringLiteral(TAXICORE_SOURCE_DIR "/resources/cities/gothenburg.taxicity"));
    QVERIFY2(loaded.city, qPrintable(loaded.error));
    m_a.fleet->locateOnRoads(loaded.city);
    m_b.fleet->locateOnRoads(loaded.city);
    const quint64 before = m_b.fleet->stats().placesAsSent;
    const LatLng moved{57.7040, 11.9660}; // central Gothenburg, near roads
    QVERIFY(m_a.fleet->updatePosition(kCars, moved, 45, 20, false));
    const CarSnapshot atA = *m_a.fleet->car(kCars);
    QVERIFY(atA.road.located);
    // The count moves after the position is stored, on B's subscriber thread: waited for last.
    QVERIFY2(waitUntil([&] { return m_b.fleet->car(kCars)->position.lat == moved.lat; }, kFeedTimeoutMs),
             "node B never saw the move");
    const CarSnapshot atB = *m_b.fleet->car(kCars);
    QCOMPARE(atB.road.segment, atA.road.segment);
    QCOMPARE(atB.road.offsetM, atA.road.offsetM);
    QVERIFY2(waitUntil([&] { return m_b.fleet->stats().placesAsSent > before; }, kFeedTimeoutMs),
             "node B snapped the move again");
    QCOMPARE(m_b.fleet->stats().placesAsSent, before + 1);
    // Leave the nodes as the other tests expect them: no city, the car back on its line.
    m_a.fleet->locateOnRoads(nullptr);
    m_b.fleet->locateOnRoads(nullptr);
    m_a.fleet->updatePosition(kCars, placeNorth(kCars), 0, 0, false);
}

// A node that dies between its claim and its commit never sends the Unclaim nor the announcement:
// the other nodes let the car go after the claim's hold, not only at their next resync (30 s).
void ClusterClaimsTest::aClaimWhoseNodeDiedIsLetGo()
{
    Node watcher = openFleetNode(m_redis.url(), m_postgres.url(), 5, kCars, kShortClaimHoldMs);
    Node doomed = openFleetNode(m_redis.url(), m_postgres.url(), 6, kCars);
    QVERIFY(watcher.fleet && doomed.fleet);
    QVERIFY2(copiesHearEachOther(*watcher.fleet, *doomed.fleet, kCars), "the two copies never heard each other");
    const auto booked = doomed.fleet->book(QStringLiteral("doomed"), kCentre, std::nullopt, 5000, etaByDistance);
    QCOMPARE(booked.result, FleetStore::BookResult::Booked);
    const int car = booked.booking.carId;
    QVERIFY2(waitUntil([&] { return watcher.fleet->car(car)->state != CarState::Available; }, kFeedTimeoutMs),
             "the watching node never heard the claim");
    doomed.fleet.reset(); // gone before its commit: nothing more is said of that booking
    QVERIFY2(waitUntil([&] { return watcher.fleet->car(car)->state == CarState::Available; },
                       kShortClaimHoldMs + kFeedTimeoutMs),
             "the claim of a node that died still holds its car");
    QVERIFY(!watcher.fleet->booking(booked.booking.id));
}

QTEST_GUILESS_MAIN(ClusterClaimsTest)
#include "cluster_claims_test.moc"
