// A booking's durations (pickup timeout, time on board) run on the host's monotonic clock from
// stamps its copy keeps (BookingSnapshot::createdMonoMs, pickupMonoMs). One made on another node
// of a cluster, or restored from the ledger, arrives with wall-clock instants only: its stamps are
// its wall-clock age at arrival, and later announcements of it must not move them (a wall-clock
// step between two announcements would otherwise reach its age). tests/trip/trip_clock_step_test
// steps a real server's clock.

#include "cluster/FleetDelta.h"
#include "fleet/SharedMemoryFleet.h"
#include "region/Clock.h"
#include "region/SharedRegion.h"

#include <QTest>
#include <memory>

using namespace taxicore;

namespace {

constexpr int64_t kAgeMs = 300'000;
constexpr int64_t kSlackMs = 50;

BookingSnapshot fromElsewhere(uint64_t id, BookingState state, int64_t createdMs)
{
    BookingSnapshot b;
    b.id = id;
    b.state = state;
    b.carId = 1;
    b.riderId = QStringLiteral("elsewhere");
    b.pickup = {57.7003, 11.9668};
    b.createdMs = createdMs;
    return b;
}

} // namespace

class BookingDurationsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void aBookingFromElsewhereIsAsOldAsItsWallClockAgeOnArrival();
    void aLaterAnnouncementKeepsTheFirstStamps();
    void aPickupFromElsewhereIsStampedOnArrival();
    void aResyncAfterARestoreKeepsTheTimeOnBoard();
    void aBookingsAgeTravelsWithItBetweenNodes();
    void aRestoredWaitingBookingIsAsOldAsItsCheckpointSays_data();
    void aRestoredWaitingBookingIsAsOldAsItsCheckpointSays();

private:
    std::unique_ptr<SharedRegion> m_region;
    std::unique_ptr<SharedMemoryFleet> m_fleet;
};

void BookingDurationsTest::init()
{
    QString error;
    m_region = SharedRegion::create(error);
    QVERIFY2(m_region, qPrintable(error));
    m_fleet = std::make_unique<SharedMemoryFleet>(*m_region);
    m_fleet->initialiseCars(2, [](int id) { return LatLng{57.70 + id * 0.001, 11.97}; });
}

void BookingDurationsTest::cleanup()
{
    m_fleet.reset();
    m_region.reset();
}

void BookingDurationsTest::aBookingFromElsewhereIsAsOldAsItsWallClockAgeOnArrival()
{
    const int64_t before = clock::monotonicMs();
    QVERIFY(m_fleet->applyRemoteBooking(fromElsewhere(7, BookingState::Assigned, clock::wallMs() - kAgeMs)));
    const int64_t after = clock::monotonicMs();
    const auto held = m_fleet->booking(7);
    QVERIFY(held);
    QVERIFY2(held->createdMonoMs >= before - kAgeMs - kSlackMs && held->createdMonoMs <= after - kAgeMs + kSlackMs,
             qPrintable(QStringLiteral("stamped %1 on the monotonic clock, arrived between %2 and %3, %4 ms old")
                            .arg(held->createdMonoMs)
                            .arg(before)
                            .arg(after)
                            .arg(kAgeMs)));
    const double ageS = m_fleet->simulatedSecondsSince(held->createdMonoMs, held->createdMs) / m_fleet->simSpeed();
    QVERIFY2(std::abs(ageS - kAgeMs / 1000.0) < 1.0, qPrintable(QString::number(ageS)));
}

void BookingDurationsTest::aLaterAnnouncementKeepsTheFirstStamps()
{
    // It arrived a second after it was made (stamped so); then the wall clock stepped forward, and
    // now its wall-clock age reads kAgeMs. The next announcement must not make it that old.
    const int64_t createdMs = clock::wallMs() - kAgeMs;
    BookingSnapshot arrived = fromElsewhere(8, BookingState::Assigned, createdMs);
    arrived.createdMonoMs = clock::monotonicMs() - 1000;
    QVERIFY(m_fleet->applyRemoteBooking(arrived));
    const int64_t first = m_fleet->booking(8)->createdMonoMs;
    QCOMPARE(first, arrived.createdMonoMs);
    QVERIFY(m_fleet->applyRemoteBooking(fromElsewhere(8, BookingState::Arriving, createdMs)));
    QCOMPARE(m_fleet->booking(8)->state, BookingState::Arriving);
    QCOMPARE(m_fleet->booking(8)->createdMonoMs, first);
}

void BookingDurationsTest::aPickupFromElsewhereIsStampedOnArrival()
{
    BookingSnapshot onTrip = fromElsewhere(9, BookingState::OnTrip, clock::wallMs() - kAgeMs);
    onTrip.pickupMs = clock::wallMs() - 60'000;
    QVERIFY(m_fleet->applyRemoteBooking(onTrip));
    const auto held = m_fleet->booking(9);
    QVERIFY(held && held->pickupMonoMs != 0);
    const double onBoardS = m_fleet->simulatedSecondsSince(held->pickupMonoMs, held->pickupMs) / m_fleet->simSpeed();
    QVERIFY2(std::abs(onBoardS - 60.0) < 1.0, qPrintable(QString::number(onBoardS)));
    // The same after a step: a held stamp stays (planted 10 s after the derived one).
    BookingSnapshot planted = onTrip;
    planted.pickupMonoMs = held->pickupMonoMs + 10'000;
    QVERIFY(m_fleet->applyRemoteBooking(planted));
    QVERIFY(m_fleet->applyRemoteBooking(onTrip));
    QCOMPARE(m_fleet->booking(9)->pickupMonoMs, planted.pickupMonoMs);
}

// A restart restores a trip 5 minutes on board (its last checkpoint), though the pickup was 25
// minutes ago: the node was down for 20. A cluster node's resync then applies the ledger's row,
// which has the pickup's own time: the time on board must stay 5 minutes.
void BookingDurationsTest::aResyncAfterARestoreKeepsTheTimeOnBoard()
{
    constexpr double kOnBoardS = 300;
    BookingSnapshot trip = fromElsewhere(10, BookingState::OnTrip, clock::wallMs() - 1'600'000);
    trip.pickupMs = clock::wallMs() - 1'500'000;
    TripProgress progress;
    progress.valid = true;
    progress.carAt = {57.701, 11.97};
    progress.tripElapsedS = kOnBoardS;
    QVERIFY(m_fleet->restoreBooking(trip, progress));
    const auto restored = m_fleet->booking(10);
    QVERIFY(restored);
    const double speed = m_fleet->simSpeed();
    QVERIFY2(std::abs(m_fleet->simulatedSecondsSince(restored->pickupMonoMs, restored->pickupMs) / speed - kOnBoardS)
                 < 1,
             "the restore did not count the checkpoint's time on board");

    QVERIFY(m_fleet->applyRemoteBooking(trip)); // the resync: the ledger's row
    const auto resynced = m_fleet->booking(10);
    const double onBoardS = m_fleet->simulatedSecondsSince(resynced->pickupMonoMs, resynced->pickupMs) / speed;
    QVERIFY2(std::abs(onBoardS - kOnBoardS) < 1,
             qPrintable(QStringLiteral("after the resync the trip has been on board %1 s").arg(onBoardS)));
}

// A booking made 5 s ago on a node whose clock is two hours behind this one's (or this node's
// clock stepped forward): its wall-clock instant reads two hours old here. The announcement carries
// its age on the sender's monotonic clock, and this copy counts from that: it expires on time.
void BookingDurationsTest::aBookingsAgeTravelsWithItBetweenNodes()
{
    constexpr int64_t kSkewMs = 2 * 3600 * 1000;
    FleetDelta sent;
    sent.kind = FleetDelta::Kind::Booking;
    sent.origin = 7;
    sent.booking = fromElsewhere(11, BookingState::OnTrip, clock::wallMs() - kSkewMs);
    sent.booking.createdMonoMs = clock::monotonicMs() - 5000;
    sent.booking.pickupMs = clock::wallMs() - kSkewMs + 1000;
    sent.booking.pickupMonoMs = clock::monotonicMs() - 4000;
    const auto received = decodeFleetDelta(encodeFleetDelta(sent));
    QVERIFY(received);
    QVERIFY(m_fleet->applyRemoteBooking(received->bookingStampedHere()));
    const auto held = m_fleet->booking(11);
    const double speed = m_fleet->simSpeed();
    const double ageS = m_fleet->simulatedSecondsSince(held->createdMonoMs, held->createdMs) / speed;
    const double onBoardS = m_fleet->simulatedSecondsSince(held->pickupMonoMs, held->pickupMs) / speed;
    QVERIFY2(std::abs(ageS - 5) < 1 && std::abs(onBoardS - 4) < 1,
             qPrintable(QStringLiteral("made %1 s ago, on board %2 s: expected 5 and 4").arg(ageS).arg(onBoardS)));
}

void BookingDurationsTest::aRestoredWaitingBookingIsAsOldAsItsCheckpointSays_data()
{
    QTest::addColumn<int>("state");
    QTest::addColumn<qint64>("checkpointAgoMs"); // negative: the wall clock stepped back since
    QTest::addColumn<double>("expectedAgeS");
    // Checkpointed 20 s old, 5 s ago: 25 s old, though its wall-clock instant reads an hour old
    // (the clock stepped forward before the checkpoint).
    QTest::newRow("assigned") << int(BookingState::Assigned) << qint64(5000) << 25.0;
    QTest::newRow("arriving") << int(BookingState::Arriving) << qint64(5000) << 25.0;
    // The checkpoint's wall-clock time lies ahead now: never younger than it said.
    QTest::newRow("stepped back since") << int(BookingState::Assigned) << qint64(-60'000) << 20.0;
}

// A restart restores a booking still waiting for its rider: its age (the pickup timeout) is its
// checkpoint's plus the wall-clock time since that checkpoint, not its wall-clock age.
void BookingDurationsTest::aRestoredWaitingBookingIsAsOldAsItsCheckpointSays()
{
    QFETCH(int, state);
    QFETCH(qint64, checkpointAgoMs);
    QFETCH(double, expectedAgeS);
    constexpr double kCheckpointedAgeS = 20;
    const BookingSnapshot waiting = fromElsewhere(12, BookingState(state), clock::wallMs() - 3'600'000);
    TripProgress progress;
    progress.valid = true;
    progress.carAt = {57.701, 11.97};
    progress.waitedS = kCheckpointedAgeS * m_fleet->simSpeed();
    progress.checkpointMs = clock::wallMs() - checkpointAgoMs;
    QVERIFY(m_fleet->restoreBooking(waiting, progress));
    const auto restored = m_fleet->booking(12);
    QVERIFY(restored);
    QCOMPARE(restored->createdMs, waiting.createdMs); // the instant shown stays when it was made
    const double ageS =
        m_fleet->simulatedSecondsSince(restored->createdMonoMs, restored->createdMs) / m_fleet->simSpeed();
    QVERIFY2(std::abs(ageS - expectedAgeS) < 1,
             qPrintable(QStringLiteral("restored %1 s old, expected %2").arg(ageS).arg(expectedAgeS)));
}

QTEST_GUILESS_MAIN(BookingDurationsTest)
#include "server_booking_durations_test.moc"
