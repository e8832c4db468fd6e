// A move (cancel, pickup, complete, reassign) is reserved in the shared fleet by the process that
// serves it and settled by that process once the ledger committed it. A worker killed while its
// commit was in flight must not leave the booking reserved for good (409 move_in_progress forever,
// never expiring, its car out of service until a restart): the primary settles the dead process's
// moves as the ledger has the booking (dispatch/AbandonedMoves).
//
//  - Over HTTP, in processes mode: the ledger's write lock is held (a real SQLite lock, from this
//    test), a rider's cancel waits on it inside a worker, every worker is killed -9, the lock is let
//    go. The commit never landed: the cancel is let go, and the rider's next cancel goes through.
//    Likewise a new booking whose commit waits: it was never acknowledged, and is withdrawn (its car
//    free again at once, not at the pickup timeout).
//  - On the fleet itself, with a real forked process that begins a move and dies, and a real
//    SQLite ledger: a move whose record the ledger holds is applied as recorded (the commit landed
//    before the process died), one it does not hold is let go; a reassign likewise; a booking the
//    ledger never got is withdrawn, one it holds stays.

#include "ApiAssert.h"
#include "HttpClient.h"
#include "RawSocket.h"
#include "RiderToken.h"
#include "RuntimeKit.h"
#include "ServerProcess.h"

#include "dispatch/AbandonedMoves.h"
#include "dispatch/FleetLedger.h"
#include "fleet/SharedMemoryFleet.h"
#include "ledger/Ledger.h"
#include "region/RegionLayout.h"
#include "region/SharedRegion.h"

#include <QDeadlineTimer>
#include <QJsonArray>
#include <QScopeGuard>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

using namespace taxicore;
using namespace taxicore::test;

namespace {

constexpr int kStartMs = 20'000;
const QJsonObject kPickup{{"lat", 57.7065}, {"lng", 11.9670}};
constexpr LatLng kCentre{57.7000, 11.9700};
constexpr double kMetreLat = 1.0 / 111'195.0;
constexpr double kRadiusM = 60'000;

HttpResponse send(const ServerProcess &server, const QByteArray &method, const QByteArray &path,
                  const QByteArray &body = {}, const Headers &headers = {})
{
    HttpClient http(server.host(), server.port(), 10'000);
    return http.request(method, path, body, headers);
}

// The pids of the workers serving now.
QList<qint64> workerPids(const ServerProcess &server)
{
    QList<qint64> pids;
    for (const rt::WorkerInfo &w : rt::serving(server))
        pids.append(w.pid);
    return pids;
}

int availableCars(const ServerProcess &server)
{
    int available = 0;
    const HttpResponse cars = send(server, "GET", "/api/v1/cars/nearby?lat=57.70&lng=11.97&radius_m=50000");
    for (const QJsonValue &car : cars.json().value("cars").toArray())
        available += car.toObject().value("state").toString() == QStringLiteral("available");
    return available;
}

// Car `id` stands `id * 10` metres north of the centre; ETA by straight-line distance.
LatLng placeNorth(int id)
{
    return {kCentre.lat + id * 10 * kMetreLat, kCentre.lng};
}

std::vector<double> etaBySpeed(LatLng pickup, const std::vector<LatLng> &cars)
{
    std::vector<double> out;
    for (const LatLng &car : cars)
        out.push_back(std::abs(car.lat - pickup.lat) / kMetreLat / 10.0);
    return out;
}

// Car `id`'s slot in the region, as region/RegionLayout.h lays it out.
CarSlot &carSlotIn(SharedRegion &region, int id)
{
    return reinterpret_cast<CarSlot *>(region.base() + RegionOffsets::cars)[id - 1];
}

// A real SQLite ledger in a temporary directory and a fleet of `cars` in a fresh region: what the
// primary settles a dead process's work with. Empty `error` when both opened.
struct FleetOnLedger {
    explicit FleetOnLedger(int cars)
    {
        LedgerOptions options;
        options.dataDir = dir.path();
        Ledger::Opened opened = Ledger::open(options);
        error = opened.error;
        ledger = std::move(opened.ledger);
        if (ledger)
            region = SharedRegion::create(error);
        if (region) {
            fleet = std::make_unique<SharedMemoryFleet>(*region);
            fleet->initialiseCars(cars, placeNorth);
        }
    }
    QTemporaryDir dir;
    QString error;
    std::unique_ptr<Ledger> ledger;
    std::unique_ptr<SharedRegion> region;
    std::unique_ptr<SharedMemoryFleet> fleet;
};

// Runs `move` in a forked child that then dies without settling it (as a worker killed between
// its commit and its settle, or before its commit); returns the child's pid once it is gone.
template <typename Move> pid_t dieAfter(Move move)
{
    const pid_t child = ::fork();
    if (child == 0) {
        move();
        ::_exit(0);
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return child;
}

} // namespace

class WorkerKilledMidMoveTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aKilledWorkersUncommittedCancelIsLetGo();
    void aKilledWorkersUncommittedBookingIsWithdrawn();
    void aDeadProcessesCommittedMovesAreApplied();
    void aDeadProcessesUncommittedMovesAreLetGo();
    void aDeadProcessesCarTakenForABookingInFlightIsFreed();
};

void WorkerKilledMidMoveTest::aKilledWorkersUncommittedCancelIsLetGo()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    ServerProcess server({QStringLiteral("--data-dir"), dir.path(), QStringLiteral("--cars"), QStringLiteral("5"),
                          QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"),
                          QStringLiteral("2")});
    QVERIFY2(server.start(kStartMs), qPrintable(server.error()));
    QVERIFY2(rt::waitForWorkersTakingConnections(server, 2, kStartMs), qPrintable(rt::describeEvents(server)));

    const HttpResponse booked =
        HttpClient(server.host(), server.port(), 10'000)
            .postJson("/api/v1/bookings", {{"rider_id", "killed-mid-move"}, {"pickup", kPickup}});
    TC_VERIFY_STATUS(booked, 201);
    const qint64 id = qint64(booked.json().value("booking_id").toDouble());
    const QByteArray token = riderToken(booked.json());
    const QByteArray cancelPath = "/api/v1/bookings/" + QByteArray::number(id) + "/cancel";
    QCOMPARE(availableCars(server), 4);

    // Another process holds the ledger's write lock: a commit waits for it (up to the busy timeout).
    {
        QSqlDatabase holder = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("holder"));
        holder.setDatabaseName(dir.filePath(QStringLiteral("ledger.sqlite")));
        QVERIFY2(holder.open(), qPrintable(holder.lastError().text()));
        QSqlQuery lock(holder);
        QVERIFY2(lock.exec(QStringLiteral("BEGIN IMMEDIATE")), qPrintable(lock.lastError().text()));

        // The rider's cancel is served by a worker, which reserves the move and waits for its commit.
        const int waiting = connectRaw(server.port());
        QVERIFY(waiting >= 0);
        const auto closeWaiting = qScopeGuard([waiting] { ::close(waiting); });
        QVERIFY(sendAll(waiting, "POST " + cancelPath + " HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer " + token
                                     + "\r\nContent-Length: 0\r\n\r\n"));
        QTRY_COMPARE_WITH_TIMEOUT(send(server, "POST", cancelPath, {}, bearer(token)).json().value("error").toString(),
                                  QStringLiteral("move_in_progress"), 3000);

        const QList<qint64> killed = workerPids(server);
        QCOMPARE(killed.size(), 2);
        for (const qint64 pid : killed)
            QVERIFY(::kill(pid_t(pid), SIGKILL) == 0);
        QVERIFY(lock.exec(QStringLiteral("ROLLBACK")));
        holder.close();
        // Respawned: none of the killed pids is serving.
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                const QList<qint64> now = workerPids(server);
                return now.size() == 2 && !now.contains(killed[0]) && !now.contains(killed[1]);
            }(),
            kStartMs);
        QVERIFY(rt::waitForWorkersTakingConnections(server, 2, kStartMs));
    }
    QSqlDatabase::removeDatabase(QStringLiteral("holder"));

    // The commit never landed, so the move is let go: the booking is as the ledger has it, and the
    // rider's cancel goes through now (before the fix: 409 move_in_progress, for good).
    QTRY_COMPARE_WITH_TIMEOUT(send(server, "GET", "/api/v1/bookings/" + QByteArray::number(id), {}, bearer(token))
                                  .json()
                                  .value("state")
                                  .toString(),
                              QStringLiteral("assigned"), 1000);
    // (A loop, not QTRY: QTRY evaluates its condition once more after it held, and a cancel twice
    // is a 409 the second time.)
    HttpResponse cancelled;
    QDeadlineTimer deadline(5000);
    do {
        cancelled = send(server, "POST", cancelPath, {}, bearer(token));
    } while (cancelled.status == 409 && !deadline.hasExpired() && (QTest::qWait(50), true));
    TC_VERIFY_STATUS(cancelled, 200);
    QCOMPARE(cancelled.json().value("state").toString(), QStringLiteral("cancelled"));
    QCOMPARE(availableCars(server), 5);
    QCOMPARE(server.stop(), 0);
}

void WorkerKilledMidMoveTest::aKilledWorkersUncommittedBookingIsWithdrawn()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    ServerProcess server({QStringLiteral("--data-dir"), dir.path(), QStringLiteral("--cars"), QStringLiteral("5"),
                          QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"),
                          QStringLiteral("2")});
    QVERIFY2(server.start(kStartMs), qPrintable(server.error()));
    QVERIFY2(rt::waitForWorkersTakingConnections(server, 2, kStartMs), qPrintable(rt::describeEvents(server)));
    {
        QSqlDatabase holder = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("holder"));
        holder.setDatabaseName(dir.filePath(QStringLiteral("ledger.sqlite")));
        QVERIFY2(holder.open(), qPrintable(holder.lastError().text()));
        QSqlQuery lock(holder);
        QVERIFY2(lock.exec(QStringLiteral("BEGIN IMMEDIATE")), qPrintable(lock.lastError().text()));

        const int rider = connectRaw(server.port());
        QVERIFY(rider >= 0);
        const auto closeRider = qScopeGuard([rider] { ::close(rider); });
        const QByteArray body =
            QJsonDocument(QJsonObject{{"rider_id", "never-acknowledged"}, {"pickup", kPickup}}).toJson();
        QVERIFY(sendAll(rider, "POST /api/v1/bookings HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                               "Content-Length: "
                                   + QByteArray::number(body.size()) + "\r\n\r\n" + body));
        // Its car is taken while the booking waits for its commit inside a worker.
        QTRY_COMPARE_WITH_TIMEOUT(availableCars(server), 4, 5000);

        const QList<qint64> killed = workerPids(server);
        QCOMPARE(killed.size(), 2);
        for (const qint64 pid : killed)
            QVERIFY(::kill(pid_t(pid), SIGKILL) == 0);
        QVERIFY(lock.exec(QStringLiteral("ROLLBACK")));
        holder.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("holder"));

    // The booking never reached the ledger and its rider never heard of it: its car is free again
    // (before the fix: taken until the pickup timeout, 10 minutes).
    QTRY_COMPARE_WITH_TIMEOUT(availableCars(server), 5, 5000);
    QCOMPARE(server.stop(), 0);
}

void WorkerKilledMidMoveTest::aDeadProcessesCommittedMovesAreApplied()
{
    FleetOnLedger bench(10);
    QVERIFY2(bench.fleet, qPrintable(bench.error));
    Ledger &ledger = *bench.ledger;
    SharedMemoryFleet &fleet = *bench.fleet;
    QString error;

    // Two bookings in the ledger; one will be cancelled, one reassigned, each by a process that
    // commits its move and dies before it settles it.
    const auto first = fleet.book(QStringLiteral("a"), kCentre, std::nullopt, kRadiusM, etaBySpeed);
    const auto second = fleet.book(QStringLiteral("b"), kCentre, std::nullopt, kRadiusM, etaBySpeed);
    QCOMPARE(first.result, FleetStore::BookResult::Booked);
    QCOMPARE(second.result, FleetStore::BookResult::Booked);
    QVERIFY(ledger.appendAndWait(bookingRecord(first.booking, {}), &error));
    QVERIFY(ledger.appendAndWait(bookingRecord(second.booking, {}), &error));

    const pid_t canceller = dieAfter([&] { fleet.beginCancel(first.booking.id); });
    const pid_t reassigner = dieAfter([&] { fleet.beginReassign(second.booking.id, 7, kRadiusM, etaBySpeed); });
    QCOMPARE(fleet.beginPickup(first.booking.id).result, FleetStore::TransitionResult::MoveInProgress);
    QCOMPARE(fleet.movesPendingFor(canceller).size(), 1u);
    QCOMPARE(fleet.movesPendingFor(reassigner).size(), 1u);
    QCOMPARE(fleet.car(7)->bookingId, second.booking.id); // reserved for it, not yet its car
    QCOMPARE(fleet.booking(second.booking.id)->carId, second.booking.carId);

    // What the dead processes committed.
    BookingSnapshot cancelled = *fleet.booking(first.booking.id);
    cancelled.state = BookingState::Cancelled;
    cancelled.endedMs = cancelled.createdMs + 1000;
    QVERIFY(ledger.appendAndWait(transitionRecord(cancelled), &error));
    BookingSnapshot reassigned = *fleet.booking(second.booking.id);
    reassigned.carId = 7;
    QVERIFY(ledger.appendAndWait(transitionRecord(reassigned), &error));

    QCOMPARE(settleAbandonedMoves(fleet, &ledger.reader(), canceller), 0);
    QCOMPARE(settleAbandonedMoves(fleet, &ledger.reader(), reassigner), 0);
    const auto afterCancel = fleet.booking(first.booking.id);
    QCOMPARE(afterCancel->state, BookingState::Cancelled);
    QCOMPARE(afterCancel->endedMs, cancelled.endedMs);
    QCOMPARE(fleet.car(first.booking.carId)->state, CarState::Available);
    const auto afterReassign = fleet.booking(second.booking.id);
    QCOMPARE(afterReassign->carId, 7);
    QCOMPARE(afterReassign->state, BookingState::Assigned);
    QCOMPARE(fleet.car(second.booking.carId)->state, CarState::Available);
    QCOMPARE(fleet.car(7)->bookingId, second.booking.id);
    QVERIFY(fleet.movesPendingFor(canceller).empty());
    QVERIFY(fleet.movesPendingFor(reassigner).empty());
    // Free to move again.
    QCOMPARE(fleet.cancel(second.booking.id).result, FleetStore::TransitionResult::Done);
}

void WorkerKilledMidMoveTest::aDeadProcessesUncommittedMovesAreLetGo()
{
    FleetOnLedger bench(10);
    QVERIFY2(bench.fleet, qPrintable(bench.error));
    Ledger &ledger = *bench.ledger;
    SharedMemoryFleet &fleet = *bench.fleet;
    QString error;
    const auto booked = fleet.book(QStringLiteral("a"), kCentre, std::nullopt, kRadiusM, etaBySpeed);
    QVERIFY(ledger.appendAndWait(bookingRecord(booked.booking, {}), &error));

    const pid_t canceller = dieAfter([&] { fleet.beginCancel(booked.booking.id); });
    QCOMPARE(settleAbandonedMoves(fleet, &ledger.reader(), canceller), 0);
    QCOMPARE(fleet.booking(booked.booking.id)->state, BookingState::Assigned);
    QCOMPARE(fleet.car(booked.booking.carId)->state, CarState::ToPickup);

    const pid_t reassigner = dieAfter([&] { fleet.beginReassign(booked.booking.id, 9, kRadiusM, etaBySpeed); });
    QCOMPARE(fleet.car(9)->state, CarState::ToPickup);
    QCOMPARE(settleAbandonedMoves(fleet, &ledger.reader(), reassigner), 0);
    QCOMPARE(fleet.booking(booked.booking.id)->carId, booked.booking.carId);
    QCOMPARE(fleet.car(9)->state, CarState::Available);
    QCOMPARE(fleet.car(9)->bookingId, 0u);

    // A booking a dead process made: withdrawn when the ledger never got it, kept when it did.
    const pid_t booker = dieAfter([&] {
        fleet.book(QStringLiteral("lost"), kCentre, std::nullopt, kRadiusM, etaBySpeed);
        fleet.book(QStringLiteral("kept"), kCentre, std::nullopt, kRadiusM, etaBySpeed);
    });
    const std::vector<uint64_t> made = fleet.openBookingsMadeBy(booker);
    QCOMPARE(made.size(), 2u);
    const auto lostBooking = fleet.booking(std::min(made[0], made[1]));
    const auto keptBooking = fleet.booking(std::max(made[0], made[1]));
    QVERIFY(ledger.appendAndWait(bookingRecord(*keptBooking, {}), &error));
    QCOMPARE(settleAbandonedMoves(fleet, &ledger.reader(), booker), 0);
    QVERIFY(!isOpen(fleet.booking(lostBooking->id)->state));
    QCOMPARE(fleet.car(lostBooking->carId)->state, CarState::Available);
    QCOMPARE(fleet.booking(keptBooking->id)->state, BookingState::Assigned);
    QCOMPARE(fleet.car(keptBooking->carId)->bookingId, keptBooking->id);

    // A live process's moves are not another's: settling for some other pid changes nothing.
    const auto begun = fleet.beginCancel(booked.booking.id);
    QCOMPARE(begun.result, FleetStore::TransitionResult::Done);
    QCOMPARE(settleAbandonedMoves(fleet, &ledger.reader(), canceller), 0);
    QCOMPARE(fleet.beginPickup(booked.booking.id).result, FleetStore::TransitionResult::MoveInProgress);
    QCOMPARE(fleet.settle(begun, true).booking.state, BookingState::Cancelled);
}

void WorkerKilledMidMoveTest::aDeadProcessesCarTakenForABookingInFlightIsFreed()
{
    constexpr int kCars = 10;
    FleetOnLedger bench(kCars);
    QVERIFY2(bench.fleet, qPrintable(bench.error));
    Ledger &ledger = *bench.ledger;
    SharedMemoryFleet &fleet = *bench.fleet;
    QString error;

    // Dies inside book(): its car (the nearest, 1) is taken, its booking id still being fetched
    // (a cluster's ids come from PostgreSQL, one round trip per block).
    const pid_t booker = dieAfter([&] {
        fleet.setIdSource([]() -> uint64_t { ::_exit(0); });
        fleet.book(QStringLiteral("dies-in-book"), kCentre, std::nullopt, kRadiusM, etaBySpeed);
    });
    QCOMPARE(fleet.car(1)->state, CarState::ToPickup);
    QCOMPARE(fleet.car(1)->bookingId, 0u);

    // Dies inside beginReassign(): the wanted car (7) is taken while its ETA is ranked by road.
    const auto booked = fleet.book(QStringLiteral("a"), kCentre, std::nullopt, kRadiusM, etaBySpeed);
    QCOMPARE(booked.booking.carId, 2);
    QVERIFY(ledger.appendAndWait(bookingRecord(booked.booking, {}), &error));
    const pid_t reassigner = dieAfter([&] {
        fleet.beginReassign(booked.booking.id, 7, kRadiusM,
                            [](LatLng, const std::vector<LatLng> &) -> std::vector<double> { ::_exit(0); });
    });
    QCOMPARE(fleet.car(7)->state, CarState::ToPickup);

    // Another process's cleanup frees neither.
    QCOMPARE(settleAbandonedMoves(fleet, &ledger.reader(), ::getpid()), 0);
    QCOMPARE(fleet.car(1)->state, CarState::ToPickup);
    QCOMPARE(fleet.car(7)->state, CarState::ToPickup);

    // Before the fix both stayed out of service until a restart: no booking names them.
    QCOMPARE(settleAbandonedMoves(fleet, &ledger.reader(), booker), 0);
    QCOMPARE(settleAbandonedMoves(fleet, nullptr, reassigner), 0); // without a ledger as well
    QCOMPARE(fleet.car(1)->state, CarState::Available);
    QCOMPARE(fleet.car(7)->state, CarState::Available);
    QCOMPARE(fleet.car(1)->bookingId, 0u);
    QCOMPARE(fleet.car(7)->bookingId, 0u);
    const auto kept = fleet.booking(booked.booking.id);
    QCOMPARE(kept->state, BookingState::Assigned);
    QCOMPARE(kept->carId, 2);
    QCOMPARE(fleet.car(2)->bookingId, booked.booking.id);

    // Dies after its booking was written, before the car named it (no hook reaches between those
    // two stores: the car's word is set as such a death leaves it). The ledger holds that booking,
    // so it stays, and keeps its car.
    fleet.setIdSource({});
    const pid_t writer =
        dieAfter([&] { fleet.book(QStringLiteral("written"), kCentre, std::nullopt, kRadiusM, etaBySpeed); });
    const std::vector<uint64_t> written = fleet.openBookingsMadeBy(writer);
    QCOMPARE(written.size(), 1u);
    const auto writtenBooking = fleet.booking(written.front());
    QVERIFY(ledger.appendAndWait(bookingRecord(*writtenBooking, {}), &error));
    carSlotIn(*bench.region, writtenBooking->carId).bookingId.store(carClaim(writer));
    QCOMPARE(fleet.car(writtenBooking->carId)->bookingId, 0u);
    QCOMPARE(settleAbandonedMoves(fleet, &ledger.reader(), writer), 0);
    QCOMPARE(fleet.booking(writtenBooking->id)->state, BookingState::Assigned);
    QCOMPARE(fleet.car(writtenBooking->carId)->state, CarState::ToPickup);
    QCOMPARE(fleet.car(writtenBooking->carId)->bookingId, writtenBooking->id);

    // Likewise a reassign whose move was reserved and whose new car did not name the booking yet;
    // the ledger holds the reassign: the booking moves to that car.
    const pid_t mover = dieAfter([&] { fleet.beginReassign(writtenBooking->id, 9, kRadiusM, etaBySpeed); });
    carSlotIn(*bench.region, 9).bookingId.store(carClaim(mover));
    BookingSnapshot reassigned = *fleet.booking(writtenBooking->id);
    reassigned.carId = 9;
    QVERIFY(ledger.appendAndWait(transitionRecord(reassigned), &error));
    QCOMPARE(settleAbandonedMoves(fleet, &ledger.reader(), mover), 0);
    QCOMPARE(fleet.booking(writtenBooking->id)->carId, 9);
    QCOMPARE(fleet.car(9)->bookingId, writtenBooking->id);
    QCOMPARE(fleet.car(9)->state, CarState::ToPickup);
    QCOMPARE(fleet.car(writtenBooking->carId)->state, CarState::Available);

    // Every other car can be booked again.
    for (int n = 2; n < kCars; ++n) {
        const auto next = fleet.book(QStringLiteral("after"), kCentre, std::nullopt, kRadiusM, etaBySpeed);
        QCOMPARE(next.result, FleetStore::BookResult::Booked);
    }
}

QTEST_GUILESS_MAIN(WorkerKilledMidMoveTest)
#include "runtime_worker_killed_mid_move_test.moc"
