// Reassigning a booking to another car: FleetStore::reassign in-process over a real
// SharedRegion (states, the named and the best car, racing bookers), then
// POST /admin/v1/bookings/{id}/reassign against a real server (answers, errors) and a restart
// from the same ledger after kill -9 (the booking comes back with its new car).

#include "ApiAssert.h"
#include "FakeClock.h"
#include "HttpClient.h"
#include "PostgresKit.h"
#include "RequireTool.h"
#include "RiderToken.h"
#include "ServerProcess.h"

#include "fleet/SharedMemoryFleet.h"
#include "region/SharedRegion.h"

#include <QDeadlineTimer>
#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>
#include <atomic>
#include <csignal>
#include <cmath>
#include <deque>
#include <latch>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <vector>

using namespace taxicore;
using namespace taxicore::test;

namespace {

constexpr LatLng kCentre{57.7000, 11.9700};
constexpr double kMetreLat = 1.0 / 111'195.0;
constexpr double kRadiusM = 60'000;
// A pickup in central Gothenburg, on the streets the server's cars drive.
const QJsonObject kPickup{{"lat", 57.7065}, {"lng", 11.9670}};

// Car `id` stands `id * 10` metres north of the centre.
LatLng placeNorth(int id)
{
    return {kCentre.lat + id * 10 * kMetreLat, kCentre.lng};
}

// ETA by straight-line distance at 10 m/s: the nearest car is the fastest.
std::vector<double> etaBySpeed(LatLng pickup, const std::vector<LatLng> &cars)
{
    std::vector<double> out;
    for (const LatLng &car : cars)
        out.push_back(std::abs(car.lat - pickup.lat) / kMetreLat / 10.0);
    return out;
}

// Cancels as the booking's rider: `Authorization: Bearer <rider_token>` of the booking answer.
HttpResponse cancelAsRider(HttpClient &http, const QJsonObject &booking)
{
    const QByteArray token = booking.value(QStringLiteral("rider_token")).toString().toLatin1();
    return http.request("POST",
                        "/api/v1/bookings/" + QByteArray::number(booking.value("booking_id").toInteger()) + "/cancel",
                        {}, {{QByteArrayLiteral("Authorization"), QByteArrayLiteral("Bearer ") + token}});
}

QByteArray reassignPath(qint64 id)
{
    return "/admin/v1/bookings/" + QByteArray::number(id) + "/reassign";
}

} // namespace

class ReassignTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void reassignTakesTheNearestOtherCarAndFreesTheOldOne();
    void reassignToANamedCar();
    void onlyAssignedOrArrivingBookingsMove();
    void aReassignWhileAnotherAwaitsTheLedgerIsAMoveInProgress();
    void reassignRacingBookersNeverSharesACar();

    void adminRouteReassignsOverHttp();
    void adminRouteRefusesBadRequests();
    void adminRouteWorksInWorkerProcesses();
    void restartAfterKillRestoresTheNewCar();
    void reassignAfterTheClockSteppedBackIsKept_data();
    void reassignAfterTheClockSteppedBackIsKept();
    void aCarTheLedgerGaveAnotherNodeIsAConflictNotAnOutage();

private:
    std::unique_ptr<SharedRegion> m_region;
    std::unique_ptr<FleetStore> m_fleet;
};

void ReassignTest::init()
{
    QString error;
    m_region = SharedRegion::create(error);
    QVERIFY2(m_region, qPrintable(error));
    m_fleet = std::make_unique<SharedMemoryFleet>(*m_region);
}

void ReassignTest::cleanup()
{
    m_fleet.reset();
    m_region.reset();
}

void ReassignTest::reassignTakesTheNearestOtherCarAndFreesTheOldOne()
{
    m_fleet->initialiseCars(10, placeNorth);
    const auto booked = m_fleet->book(QStringLiteral("r"), kCentre, std::nullopt, kRadiusM, etaBySpeed);
    QCOMPARE(booked.result, FleetStore::BookResult::Booked);
    QCOMPARE(booked.booking.carId, 1);

    const auto moved = m_fleet->reassign(booked.booking.id, 0, kRadiusM, etaBySpeed);
    QCOMPARE(moved.result, FleetStore::ReassignResult::Done);
    QCOMPARE(moved.previousCarId, 1);
    QCOMPARE(moved.booking.carId, 2); // car 1 is not available: the next nearest
    QCOMPARE(moved.booking.state, BookingState::Assigned);
    QCOMPARE(moved.booking.etaS, 2u); // 20 m at 10 m/s
    QCOMPARE(moved.car.id, 2);
    QCOMPARE(moved.car.state, CarState::ToPickup);
    QCOMPARE(moved.car.bookingId, booked.booking.id);
    const auto old = m_fleet->car(1);
    QCOMPARE(old->state, CarState::Available);
    QCOMPARE(old->bookingId, uint64_t(0));
    QCOMPARE(m_fleet->booking(booked.booking.id)->carId, 2);
    QCOMPARE(m_fleet->booking(booked.booking.id)->riderId, QStringLiteral("r"));
}

void ReassignTest::reassignToANamedCar()
{
    m_fleet->initialiseCars(10, placeNorth);
    const auto first = m_fleet->book(QStringLiteral("a"), kCentre, std::nullopt, kRadiusM, etaBySpeed);
    const auto second = m_fleet->book(QStringLiteral("b"), kCentre, std::nullopt, kRadiusM, etaBySpeed);
    QCOMPARE(second.booking.carId, 2);

    const auto toSeven = m_fleet->reassign(first.booking.id, 7, kRadiusM, etaBySpeed);
    QCOMPARE(toSeven.result, FleetStore::ReassignResult::Done);
    QCOMPARE(toSeven.booking.carId, 7);
    QCOMPARE(toSeven.booking.etaS, 7u);
    QCOMPARE(m_fleet->car(1)->state, CarState::Available);

    // Its own car, a car another booking holds, a car that does not exist: not available.
    for (const int car : {7, 2, 11}) {
        const auto refused = m_fleet->reassign(first.booking.id, car, kRadiusM, etaBySpeed);
        QCOMPARE(refused.result, FleetStore::ReassignResult::CarUnavailable);
        QCOMPARE(m_fleet->booking(first.booking.id)->carId, 7);
    }
    QCOMPARE(m_fleet->car(2)->bookingId, second.booking.id);
    QCOMPARE(m_fleet->reassign(999, 3, kRadiusM, etaBySpeed).result, FleetStore::ReassignResult::NotFound);
    QCOMPARE(m_fleet->car(3)->state, CarState::Available); // a refused move takes no car
}

void ReassignTest::onlyAssignedOrArrivingBookingsMove()
{
    m_fleet->initialiseCars(10, placeNorth);
    const auto booked = m_fleet->book(QStringLiteral("r"), kCentre, std::nullopt, kRadiusM, etaBySpeed);
    const uint64_t id = booked.booking.id;
    // The car reaches the pickup: arriving. A reassign sends another car: assigned again.
    m_fleet->updatePosition(1, kCentre, 0, 0, false);
    QCOMPARE(m_fleet->booking(id)->state, BookingState::Arriving);
    const auto moved = m_fleet->reassign(id, 0, kRadiusM, etaBySpeed);
    QCOMPARE(moved.result, FleetStore::ReassignResult::Done);
    QCOMPARE(moved.booking.state, BookingState::Assigned);
    QCOMPARE(moved.booking.arrivedMs, int64_t(0));
    QCOMPARE(moved.booking.carId, 2);

    m_fleet->updatePosition(2, kCentre, 0, 0, false);
    QCOMPARE(m_fleet->pickup(id).result, FleetStore::TransitionResult::Done);
    auto refused = m_fleet->reassign(id, 0, kRadiusM, etaBySpeed);
    QCOMPARE(refused.result, FleetStore::ReassignResult::IllegalState);
    QCOMPARE(refused.booking.state, BookingState::OnTrip);
    QCOMPARE(m_fleet->car(2)->state, CarState::OnTrip);

    const auto other = m_fleet->book(QStringLiteral("s"), kCentre, std::nullopt, kRadiusM, etaBySpeed);
    QCOMPARE(m_fleet->cancel(other.booking.id).result, FleetStore::TransitionResult::Done);
    refused = m_fleet->reassign(other.booking.id, 5, kRadiusM, etaBySpeed);
    QCOMPARE(refused.result, FleetStore::ReassignResult::IllegalState);
    QCOMPARE(refused.booking.state, BookingState::Cancelled);
    QCOMPARE(m_fleet->car(5)->state, CarState::Available);
}

// Two reassigns of one booking at once (review: six concurrent admin calls): the second finds the
// first awaiting the ledger. It was refused as an illegal state with the message "booking 61 is
// assigned; reassign needs assigned or arriving"; it is a move in progress, as for a pickup or a
// cancel, and the car it took is given back.
void ReassignTest::aReassignWhileAnotherAwaitsTheLedgerIsAMoveInProgress()
{
    m_fleet->initialiseCars(10, placeNorth);
    const auto booked = m_fleet->book(QStringLiteral("r"), kCentre, std::nullopt, kRadiusM, etaBySpeed);
    const uint64_t id = booked.booking.id;
    const auto first = m_fleet->beginReassign(id, 3, kRadiusM, etaBySpeed);
    QCOMPARE(first.result, FleetStore::ReassignResult::Done);
    const auto second = m_fleet->beginReassign(id, 4, kRadiusM, etaBySpeed);
    QCOMPARE(second.result, FleetStore::ReassignResult::MoveInProgress);
    QCOMPARE(second.booking.state, BookingState::Assigned);
    QCOMPARE(m_fleet->car(4)->state, CarState::Available);
    QCOMPARE(m_fleet->car(4)->bookingId, uint64_t(0));
    // The first settles as the ledger decided; then the booking moves again.
    QCOMPARE(m_fleet->settleReassign(first, true).booking.carId, 3);
    QCOMPARE(m_fleet->reassign(id, 4, kRadiusM, etaBySpeed).result, FleetStore::ReassignResult::Done);
}

void ReassignTest::reassignRacingBookersNeverSharesACar()
{
    // Bookers book and cancel (each keeps at most kHeld open) while reassigners move random
    // bookings to the best or to a random car: all of them take cars with the same CAS.
    constexpr int kCars = 60;
    constexpr int kBookers = 3;
    constexpr int kHeld = 15;
    constexpr int kBookingsEach = 400;
    constexpr int kMaxBookingsEach = 20'000;
    constexpr int kMinReassigns = 200;
    m_fleet->initialiseCars(kCars, placeNorth);
    std::atomic<int> reassigned{0};
    std::atomic<int> booked{0};
    std::atomic<int> outcomes[5] = {}; // by ReassignResult
    std::atomic<bool> booking{true};
    std::latch start(kBookers + 2);
    std::vector<std::thread> bookers;
    std::vector<std::thread> reassigners;
    for (int t = 0; t < kBookers; ++t) {
        bookers.emplace_back([&, t] {
            std::deque<uint64_t> held;
            start.arrive_and_wait();
            // Until both sides did their share (bounded: a stuck reassigner fails below, not here).
            for (int i = 0; i < kMaxBookingsEach && (i < kBookingsEach || reassigned.load() < kMinReassigns); ++i) {
                const auto b = m_fleet->book(QStringLiteral("rider-%1-%2").arg(t).arg(i), kCentre, std::nullopt,
                                             kRadiusM, etaBySpeed);
                if (b.result == FleetStore::BookResult::Booked) {
                    held.push_back(b.booking.id);
                    ++booked;
                }
                if (int(held.size()) > kHeld) {
                    // A reassign of it may be in its two steps: like a rider told 409
                    // move_in_progress, cancel again (the reassign settles in microseconds here).
                    while (m_fleet->cancel(held.front()).result == FleetStore::TransitionResult::MoveInProgress)
                        std::this_thread::yield();
                    held.pop_front();
                }
            }
        });
    }
    for (int t = 0; t < 2; ++t) {
        reassigners.emplace_back([&, t] {
            std::mt19937 random(unsigned(t + 1));
            start.arrive_and_wait();
            while (booking.load()) {
                const uint64_t newest = m_fleet->control().nextBookingId.load();
                if (newest == 0)
                    continue;
                const uint64_t id = newest - random() % std::min<uint64_t>(newest, kBookers * kHeld);
                const int car = t == 0 ? 0 : int(1 + random() % kCars); // the best, or a named car
                const auto r = m_fleet->reassign(id, car, kRadiusM, etaBySpeed).result;
                ++outcomes[int(r)];
                if (r == FleetStore::ReassignResult::Done)
                    ++reassigned;
            }
        });
    }
    for (std::thread &t : bookers)
        t.join();
    booking = false;
    for (std::thread &t : reassigners)
        t.join();

    qInfo("%d reassigns succeeded while %d bookings were made (%d not found, %d illegal, %d no car, %d moving)",
          reassigned.load(), booked.load(), outcomes[1].load(), outcomes[2].load(), outcomes[3].load(),
          outcomes[4].load());
    QVERIFY2(reassigned.load() >= kMinReassigns, "too few reassigns succeeded: the race was not exercised");
    // Every open booking holds its own car, that car points back to it, and no other car is taken.
    std::map<int, uint64_t> carToBooking;
    for (const BookingSnapshot &b : m_fleet->recentBookings(kBookers * kMaxBookingsEach)) {
        if (!isOpen(b.state))
            continue;
        QVERIFY2(carToBooking.emplace(b.carId, b.id).second,
                 qPrintable(QStringLiteral("car %1 has two bookings").arg(b.carId)));
        const auto car = m_fleet->car(b.carId);
        QCOMPARE(car->bookingId, b.id);
        QCOMPARE(car->state, CarState::ToPickup);
    }
    QCOMPARE(int(carToBooking.size()), kBookers * kHeld);
    // No car is left taken without a booking (a refused or lost race gives its car back).
    for (int id = 1; id <= kCars; ++id) {
        const auto car = m_fleet->car(id);
        QCOMPARE(car->state == CarState::ToPickup, carToBooking.count(id) == 1);
    }
}

void ReassignTest::adminRouteReassignsOverHttp()
{
    QTemporaryDir data;
    ServerProcess server({QStringLiteral("--cars"), QStringLiteral("40"), QStringLiteral("--sim-speed"),
                          QStringLiteral("0.001"), QStringLiteral("--data-dir"), data.path()});
    QVERIFY2(server.start(), qPrintable(server.error()));
    HttpClient http(server.host(), server.port());

    const HttpResponse booked = http.postJson("/api/v1/bookings", {{"rider_id", "alice"}, {"pickup", kPickup}});
    TC_VERIFY_STATUS(booked, 201);
    const qint64 id = booked.json().value("booking_id").toInteger();
    const int firstCar = booked.json().value("car_id").toInt();

    // No body: the best available car by road.
    HttpResponse moved = http.request("POST", reassignPath(id));
    TC_VERIFY_STATUS(moved, 200);
    const int secondCar = moved.json().value("car_id").toInt();
    QVERIFY(secondCar > 0 && secondCar != firstCar);
    QCOMPARE(moved.json().value("state").toString(), QStringLiteral("assigned"));
    QCOMPARE(moved.json().value("previous_car_id").toInt(), firstCar);
    QCOMPARE(moved.json().value("car").toObject().value("id").toInt(), secondCar);
    QCOMPARE(readBooking(http, id, riderToken(booked.json())).json().value("car_id").toInt(), secondCar);

    // Back to the first car, by name: it was freed.
    moved = http.postJson(reassignPath(id), {{"car_id", firstCar}});
    TC_VERIFY_STATUS(moved, 200);
    QCOMPARE(moved.json().value("car_id").toInt(), firstCar);

    // A car another booking holds is not available.
    const HttpResponse other = http.postJson("/api/v1/bookings", {{"rider_id", "bob"}, {"pickup", kPickup}});
    TC_VERIFY_STATUS(other, 201);
    TC_VERIFY_ERROR(http.postJson(reassignPath(id), {{"car_id", other.json().value("car_id").toInt()}}), 409,
                    "car_not_available");

    // A cancelled booking does not move.
    TC_VERIFY_STATUS(cancelAsRider(http, booked.json()), 200);
    const HttpResponse refused = http.request("POST", reassignPath(id), "{}");
    TC_VERIFY_ERROR(refused, 409, "illegal_transition");
    QCOMPARE(refused.json().value("state").toString(), QStringLiteral("cancelled"));
}

void ReassignTest::adminRouteRefusesBadRequests()
{
    QTemporaryDir data;
    ServerProcess server({QStringLiteral("--cars"), QStringLiteral("20"), QStringLiteral("--sim-speed"),
                          QStringLiteral("0.001"), QStringLiteral("--data-dir"), data.path()});
    QVERIFY2(server.start(), qPrintable(server.error()));
    HttpClient http(server.host(), server.port());
    const HttpResponse booked = http.postJson("/api/v1/bookings", {{"rider_id", "carol"}, {"pickup", kPickup}});
    TC_VERIFY_STATUS(booked, 201);
    const qint64 id = booked.json().value("booking_id").toInteger();

    TC_VERIFY_ERROR(http.request("POST", reassignPath(987654)), 404, "booking_not_found");
    TC_VERIFY_ERROR(http.request("POST", "/admin/v1/bookings/abc/reassign"), 400, "");
    TC_VERIFY_ERROR(http.request("POST", reassignPath(id), "{"), 400, "malformed_json");
    TC_VERIFY_ERROR(http.request("POST", reassignPath(id), "[1]"), 400, "malformed_json");
    TC_VERIFY_ERROR(http.request("POST", reassignPath(id), R"({"car_id":"7"})"), 400, "");
    TC_VERIFY_ERROR(http.request("POST", reassignPath(id), R"({"car_id":1.5})"), 400, "invalid_car_id");
    TC_VERIFY_ERROR(http.request("POST", reassignPath(id), R"({"car_id":0})"), 400, "");
    TC_VERIFY_ERROR(http.request("POST", reassignPath(id), R"({"car_id":200000})"), 400, "");
    TC_VERIFY_ERROR(http.request("POST", reassignPath(id), R"({"car_id":21})"), 404, "car_not_found");
    TC_VERIFY_STATUS(http.request("GET", reassignPath(id)), 405);
    // Nothing moved.
    QCOMPARE(readBooking(http, id, riderToken(booked.json())).json().value("car_id").toInt(),
             booked.json().value("car_id").toInt());
}

void ReassignTest::adminRouteWorksInWorkerProcesses()
{
    // Workers serve the route from their own processes: the same shared fleet, their own ledger.
    QTemporaryDir data;
    ServerProcess server({QStringLiteral("--cars"), QStringLiteral("30"), QStringLiteral("--sim-speed"),
                          QStringLiteral("0.001"), QStringLiteral("--mode"), QStringLiteral("processes"),
                          QStringLiteral("--workers"), QStringLiteral("2"), QStringLiteral("--data-dir"), data.path()});
    QVERIFY2(server.start(), qPrintable(server.error()));
    HttpClient http(server.host(), server.port());
    // Fresh connections are spread over the workers: bookings and moves come from different processes.
    for (int i = 0; i < 4; ++i) {
        HttpClient client(server.host(), server.port());
        const HttpResponse booked =
            client.postJson("/api/v1/bookings", {{"rider_id", QStringLiteral("w%1").arg(i)}, {"pickup", kPickup}});
        TC_VERIFY_STATUS(booked, 201);
        HttpClient other(server.host(), server.port());
        const HttpResponse moved = other.request("POST", reassignPath(booked.json().value("booking_id").toInteger()));
        TC_VERIFY_STATUS(moved, 200);
        QVERIFY(moved.json().value("car_id").toInt() != booked.json().value("car_id").toInt());
        QCOMPARE(readBooking(http, booked.json().value("booking_id").toInteger(), riderToken(booked.json()))
                     .json()
                     .value("car_id")
                     .toInt(),
                 moved.json().value("car_id").toInt());
    }
}

void ReassignTest::restartAfterKillRestoresTheNewCar()
{
    QTemporaryDir data;
    QVERIFY(data.isValid());
    const QStringList args{QStringLiteral("--cars"), QStringLiteral("30"),         QStringLiteral("--sim-speed"),
                           QStringLiteral("0.001"),  QStringLiteral("--data-dir"), data.path()};
    qint64 id = 0;
    int newCar = 0;
    QByteArray token;
    {
        ServerProcess server(args);
        QVERIFY2(server.start(), qPrintable(server.error()));
        HttpClient http(server.host(), server.port());
        const HttpResponse booked = http.postJson("/api/v1/bookings", {{"rider_id", "dave"}, {"pickup", kPickup}});
        TC_VERIFY_STATUS(booked, 201);
        id = booked.json().value("booking_id").toInteger();
        token = riderToken(booked.json());
        const int oldCar = booked.json().value("car_id").toInt();
        newCar = oldCar == 17 ? 18 : 17;
        const HttpResponse moved = http.postJson(reassignPath(id), {{"car_id", newCar}});
        TC_VERIFY_STATUS(moved, 200); // answered after the ledger committed it
        ::kill(pid_t(server.pid()), SIGKILL);
        QVERIFY(server.waitForExit(10'000));
    }
    ServerProcess again(args);
    QVERIFY2(again.start(), qPrintable(again.error()));
    HttpClient http(again.host(), again.port());
    const HttpResponse restored = readBooking(http, id, token);
    TC_VERIFY_STATUS(restored, 200);
    QCOMPARE(restored.json().value("car_id").toInt(), newCar);
    QCOMPARE(restored.json().value("state").toString(), QStringLiteral("assigned"));
    QCOMPARE(restored.json().value("rider_id").toString(), QStringLiteral("dave"));
}

// The wall clock is stepped back an hour (NTP, an operator) between a booking and its reassign:
// the reassign is acknowledged, so the ledger must keep it although its time is older than the
// booking's. (Before, the ledger ordered a reassign by wall-clock time and ignored it: a restart
// brought the booking back with its old car, which meanwhile served someone else.)
void ReassignTest::reassignAfterTheClockSteppedBackIsKept_data()
{
    QTest::addColumn<bool>("postgres");
    QTest::newRow("sqlite") << false;
    QTest::newRow("postgresql") << true;
}

void ReassignTest::reassignAfterTheClockSteppedBackIsKept()
{
    QFETCH(bool, postgres);
    TC_REQUIRE_TOOL(fakeTimeAvailable(), "libfaketime is not installed (package faketime)");
    QTemporaryDir data;
    QVERIFY(data.isValid());
    const QString offsetFile = data.filePath(QStringLiteral("clock-offset"));
    QVERIFY(setWallClockOffset(offsetFile, 0));
    QStringList args{QStringLiteral("--cars"), QStringLiteral("30"),         QStringLiteral("--sim-speed"),
                     QStringLiteral("0.001"),  QStringLiteral("--data-dir"), data.path()};
    PostgresKit pg;
    if (postgres) {
        TC_REQUIRE_TOOL(!PostgresKit::binDir().isEmpty(), "PostgreSQL (initdb) is not installed");
        QVERIFY2(pg.start(), qPrintable(pg.error()));
        args << QStringLiteral("--ledger") << pg.url();
    }
    qint64 id = 0;
    int newCar = 0;
    QByteArray token;
    {
        ServerProcess server(args);
        server.setEnvironment(steppableWallClock(offsetFile));
        QVERIFY2(server.start(), qPrintable(server.error()));
        HttpClient http(server.host(), server.port());
        const HttpResponse booked = http.postJson("/api/v1/bookings", {{"rider_id", "erin"}, {"pickup", kPickup}});
        TC_VERIFY_STATUS(booked, 201);
        id = booked.json().value("booking_id").toInteger();
        token = riderToken(booked.json());
        const qint64 bookedAt = booked.json().value("created_ms").toInteger();
        const int oldCar = booked.json().value("car_id").toInt();
        newCar = oldCar == 17 ? 18 : 17;

        QVERIFY(setWallClockOffset(offsetFile, -3600));
        // The server's clock is an hour back once a new booking is stamped so (libfaketime reads the
        // offset at most once a second). Each probe is cancelled at once: it keeps no car.
        bool stepped = false;
        for (QDeadlineTimer deadline(15'000); !stepped && !deadline.hasExpired(); QTest::qWait(250)) {
            const HttpResponse probe = http.postJson("/api/v1/bookings", {{"rider_id", "probe"}, {"pickup", kPickup}});
            TC_VERIFY_STATUS(probe, 201);
            stepped = probe.json().value("created_ms").toInteger() < bookedAt - 3'000'000;
            TC_VERIFY_STATUS(
                moveBooking(http, probe.json().value("booking_id").toInteger(), "cancel", riderToken(probe.json())),
                200);
        }
        QVERIFY2(stepped, "the server's wall clock did not step back: libfaketime is not in effect");
        const HttpResponse moved = http.request("POST", reassignPath(id)); // the nearest available car
        TC_VERIFY_STATUS(moved, 200);
        newCar = moved.json().value("car_id").toInt();
        QVERIFY(newCar > 0 && newCar != oldCar);
        ::kill(pid_t(server.pid()), SIGKILL);
        QVERIFY(server.waitForExit(10'000));
    }
    ServerProcess again(args);
    QVERIFY2(again.start(), qPrintable(again.error()));
    HttpClient http(again.host(), again.port());
    const HttpResponse restored = readBooking(http, id, token);
    TC_VERIFY_STATUS(restored, 200);
    QCOMPARE(restored.json().value("car_id").toInt(), newCar);
    QCOMPARE(restored.json().value("state").toString(), QStringLiteral("assigned"));
}

// Two nodes on one PostgreSQL ledger and no shared fleet (no --fleet): a node cannot see the
// other's bookings, so it offers a car the ledger gave the other node. Its rider's booking is
// refused by the ledger (car_taken) and, offered the same car again, ends in a 409 instead of
// being tried for ever (it hung, the database hammered); its operator's reassign to such a car is
// a 409 conflict with nothing moved, not a 503 saying the ledger is down.
void ReassignTest::aCarTheLedgerGaveAnotherNodeIsAConflictNotAnOutage()
{
    TC_REQUIRE_TOOL(!PostgresKit::binDir().isEmpty(), "PostgreSQL (initdb) is not installed");
    PostgresKit pg;
    QVERIFY2(pg.start(), qPrintable(pg.error()));
    QTemporaryDir dataA;
    QTemporaryDir dataB;
    QVERIFY(dataA.isValid() && dataB.isValid());
    const QStringList common{QStringLiteral("--cars"), QStringLiteral("30"),       QStringLiteral("--sim-speed"),
                             QStringLiteral("0.001"),  QStringLiteral("--ledger"), pg.url()};
    ServerProcess nodeA(common + QStringList{QStringLiteral("--data-dir"), dataA.path()});
    QVERIFY2(nodeA.start(), qPrintable(nodeA.error()));
    ServerProcess nodeB(common + QStringList{QStringLiteral("--data-dir"), dataB.path()});
    QVERIFY2(nodeB.start(), qPrintable(nodeB.error()));
    HttpClient httpA(nodeA.host(), nodeA.port());
    HttpClient httpB(nodeB.host(), nodeB.port());

    const HttpResponse onB = httpB.postJson("/api/v1/bookings", {{"rider_id", "bea"}, {"pickup", kPickup}});
    TC_VERIFY_STATUS(onB, 201);
    const qint64 idB = onB.json().value("booking_id").toInteger();
    const int carOfB = onB.json().value("car_id").toInt();

    // A offers B's car (the same fleet, the same pickup): refused by the ledger, then a 409.
    const HttpResponse lost = httpA.postJson("/api/v1/bookings", {{"rider_id", "ada"}, {"pickup", kPickup}});
    TC_VERIFY_ERROR(lost, 409, "no_car_available");
    QVERIFY2(lost.json().value("message").toString().contains(QString::number(carOfB)), lost.body.constData());
    QCOMPARE(pg.psql(QStringLiteral("SELECT count(*) FROM bookings")), QStringLiteral("1"));
    QTRY_VERIFY_WITH_TIMEOUT(nodeA.stderrText().contains("nodes sharing one ledger need a shared fleet"), 5'000);

    // A books elsewhere, a car B does not know is taken.
    HttpResponse onA;
    for (const QJsonObject &pickup :
         {QJsonObject{{"lat", 57.6985}, {"lng", 11.9790}}, QJsonObject{{"lat", 57.7090}, {"lng", 11.9500}}}) {
        onA = httpA.postJson("/api/v1/bookings", {{"rider_id", "ada"}, {"pickup", pickup}});
        if (onA.status == 201)
            break;
    }
    TC_VERIFY_STATUS(onA, 201);
    const int carX = onA.json().value("car_id").toInt();
    QVERIFY(carX != carOfB);

    const HttpResponse refused = httpB.postJson(reassignPath(idB), {{"car_id", carX}});
    TC_VERIFY_ERROR(refused, 409, "car_not_available");
    QVERIFY2(refused.json().value("message").toString().contains(QString::number(carX)), refused.body.constData());
    // Nothing moved: the booking keeps its car in B's view and in the ledger, and X stays A's.
    const HttpResponse kept = readBooking(httpB, idB, riderToken(onB.json()));
    QCOMPARE(kept.json().value("car_id").toInt(), carOfB);
    QCOMPARE(kept.json().value("state").toString(), QStringLiteral("assigned"));
    QCOMPARE(pg.psql(QStringLiteral("SELECT car_id FROM bookings WHERE id = %1").arg(idB)), QString::number(carOfB));
    QCOMPARE(pg.psql(QStringLiteral("SELECT booking_id FROM cars WHERE id = %1").arg(carX)),
             QString::number(onA.json().value("booking_id").toInteger()));
    // The refused move reserved nothing: the booking moves to a car no one holds.
    int freeCar = 1;
    while (freeCar == carX || freeCar == carOfB)
        ++freeCar;
    const HttpResponse moved = httpB.postJson(reassignPath(idB), {{"car_id", freeCar}});
    TC_VERIFY_STATUS(moved, 200);
    QCOMPARE(moved.json().value("car_id").toInt(), freeCar);
}

QTEST_GUILESS_MAIN(ReassignTest)
#include "server_reassign_test.moc"
