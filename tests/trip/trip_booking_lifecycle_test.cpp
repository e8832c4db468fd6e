// What a booking does over its life, seen by its rider (issue 15): a booking nobody boards
// expires after --pickup-timeout and frees its car (the ledger records it); eta_s follows the car
// to the pickup and is 0 once it is there, eta_dropoff_s on trip, the car's state says what it
// does; a trip without a drop-off drives somewhere and is metered; durations are simulated
// seconds; a booking that ended before a restart is still answered (from the ledger); generated
// riders are new each run; /api/v1/trips gives distances to 0.1 m. Real taxicore-server processes
// with fast simulated time, the ledger read from its SQLite file.

#include "LedgerValue.h"
#include "ApiAssert.h"
#include "HttpClient.h"
#include "RiderToken.h"
#include "ServerProcess.h"
#include "Wait.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <functional>

using namespace taxicore::test;

namespace {

constexpr int kWaitMs = 15'000;
constexpr int kPollMs = 100;
constexpr int kRidersPerRun = 5; // rides the demand generator books in each run before it stops
const QJsonObject kPickup{{"lat", 57.7003}, {"lng", 11.9668}};
const QJsonObject kDropoff{{"lat", 57.7078}, {"lng", 11.9880}};

QStringList serverArgs(const QTemporaryDir &dir, const QStringList &extra)
{
    return QStringList{QStringLiteral("--data-dir"), dir.path(), QStringLiteral("--seed"), QStringLiteral("5")} + extra;
}

using taxicore::test::ledgerValue;

// Polls `probe` until it is true or kWaitMs passed.
bool eventually(const std::function<bool()> &probe)
{
    return waitUntil(probe, kWaitMs, kPollMs);
}

qint64 bookingId(const HttpResponse &r)
{
    return qint64(r.json().value("booking_id").toDouble());
}

} // namespace

class BookingLifecycleTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void unboardedBookingExpiresAndFreesItsCar();
    void etaFollowsTheCarAndCarStatesSayWhatItDoes();
    void tripWithoutDropoffDrivesSomewhereAndIsMetered();
    void endedBookingIsAnsweredAfterRestart();
};

void BookingLifecycleTest::unboardedBookingExpiresAndFreesItsCar()
{
    QTemporaryDir dir;
    // One car; 30 simulated seconds to board at 60× simulated time: half a second of real time.
    ServerProcess server(
        serverArgs(dir, {QStringLiteral("--cars"), QStringLiteral("1"), QStringLiteral("--sim-speed"),
                         QStringLiteral("60"), QStringLiteral("--pickup-timeout"), QStringLiteral("30")}));
    QVERIFY2(server.start(20'000), qPrintable(server.error()));
    HttpClient http(server.host(), server.port());
    const HttpResponse booked = http.postJson("/api/v1/bookings", {{"rider_id", "no-show"}, {"pickup", kPickup}});
    TC_VERIFY_STATUS(booked, 201);
    const qint64 id = bookingId(booked);
    const QByteArray token = riderToken(booked.json());
    const int carId = booked.json().value("car_id").toInt();

    QJsonObject last;
    QVERIFY2(eventually([&] {
                 last = readBooking(http, id, token).json();
                 return last.value("state").toString() == QStringLiteral("expired");
             }),
             QJsonDocument(last).toJson().constData());
    // Its car is free again: available, and the next rider gets it. The ended booking no longer
    // shows the car live (it may drive someone else now); car_id says which car it was.
    QVERIFY2(!last.contains("car"), QJsonDocument(last).toJson().constData());
    QCOMPARE(last.value("car_id").toInt(), carId);
    const HttpResponse nearby =
        http.get("/api/v1/cars/nearby?lat=" + QByteArray::number(kPickup.value("lat").toDouble())
                 + "&lng=" + QByteArray::number(kPickup.value("lng").toDouble()) + "&radius_m=50000&limit=5");
    TC_VERIFY_STATUS(nearby, 200);
    const QJsonArray cars = nearby.json().value("cars").toArray();
    QCOMPARE(cars.size(), 1);
    QCOMPARE(cars.first().toObject().value("id").toInt(), carId);
    QCOMPARE(cars.first().toObject().value("state").toString(), QStringLiteral("available"));
    const HttpResponse next = http.postJson("/api/v1/bookings", {{"rider_id", "next"}, {"pickup", kPickup}});
    TC_VERIFY_STATUS(next, 201);
    QCOMPARE(next.json().value("car_id").toInt(), carId);
    // Boarding an expired booking is refused, naming its state.
    TC_VERIFY_ERROR(moveBooking(http, id, "pickup", token), 409, "illegal_transition");
    // The ledger has it as expired (committed after the answer at most a moment later).
    const QString sql = QStringLiteral("SELECT state FROM bookings WHERE id = %1").arg(id);
    QVERIFY2(eventually([&] { return ledgerValue(dir, sql).toString() == QStringLiteral("expired"); }),
             qPrintable(ledgerValue(dir, sql).toString()));
    QCOMPARE(server.stop(), 0);
}

void BookingLifecycleTest::etaFollowsTheCarAndCarStatesSayWhatItDoes()
{
    QTemporaryDir dir;
    ServerProcess server(
        serverArgs(dir, {QStringLiteral("--cars"), QStringLiteral("60"), QStringLiteral("--sim-speed"),
                         QStringLiteral("30"), QStringLiteral("--pickup-timeout"), QStringLiteral("36000")}));
    QVERIFY2(server.start(20'000), qPrintable(server.error()));
    HttpClient http(server.host(), server.port());
    const HttpResponse booked =
        http.postJson("/api/v1/bookings", {{"rider_id", "eta"}, {"pickup", kPickup}, {"dropoff", kDropoff}});
    TC_VERIFY_STATUS(booked, 201);
    const qint64 id = bookingId(booked);
    const QByteArray token = riderToken(booked.json());

    // Assigned: the car drives to the pickup and eta_s counts down with it.
    double firstEta = -1, lowestEta = 1e9;
    QJsonObject last;
    QVERIFY2(eventually([&] {
                 last = readBooking(http, id, token).json();
                 if (last.value("state").toString() != QStringLiteral("assigned"))
                     return true;
                 const double eta = last.value("eta_s").toDouble();
                 if (firstEta < 0)
                     firstEta = eta;
                 lowestEta = std::min(lowestEta, eta);
                 if (last.value("car").toObject().value("state").toString() != QStringLiteral("to_pickup"))
                     firstEta = 1e9; // fails below: an assigned booking's car drives to the pickup
                 return false;
             }),
             QJsonDocument(last).toJson().constData());
    QVERIFY2(firstEta > 0 && firstEta < 1e9 && lowestEta < firstEta,
             qPrintable(QStringLiteral("eta_s first %1, lowest %2").arg(firstEta).arg(lowestEta)));
    // Arrived: nothing left to wait for, and the car waits at the pickup.
    QCOMPARE(last.value("state").toString(), QStringLiteral("arriving"));
    QCOMPARE(last.value("eta_s").toDouble(), 0.0);
    QCOMPARE(last.value("car").toObject().value("state").toString(), QStringLiteral("waiting"));

    // On trip: eta_dropoff_s counts down to the drop-off; eta_s stays 0.
    TC_VERIFY_STATUS(moveBooking(http, id, "pickup", token), 200);
    const QJsonObject boarded = readBooking(http, id, token).json();
    QCOMPARE(boarded.value("eta_s").toDouble(), 0.0);
    QCOMPARE(boarded.value("car").toObject().value("state").toString(), QStringLiteral("on_trip"));
    const double toDropoff = boarded.value("eta_dropoff_s").toDouble(-1);
    QVERIFY2(toDropoff > 0, QJsonDocument(boarded).toJson().constData());
    QVERIFY2(eventually([&] {
                 last = readBooking(http, id, token).json();
                 return last.value("eta_dropoff_s").toDouble(1e9) < toDropoff;
             }),
             QJsonDocument(last).toJson().constData());

    // One time base: a second and a half of real time on board is ~45 simulated seconds, and the
    // time charge is for those.
    QTest::qWait(1500);
    const HttpResponse done = moveBooking(http, id, "complete", token);
    TC_VERIFY_STATUS(done, 200);
    const double durationS = done.json().value("duration_s").toDouble();
    QVERIFY2(durationS >= 30, done.body.constData());
    const QJsonObject fare = done.json().value("fare").toObject();
    if (fare.value("time_charge").toDouble() > 0) // metered (left before the drop-off)
        QVERIFY2(std::abs(fare.value("time_charge").toDouble() - fare.value("per_minute").toDouble() * durationS / 60)
                     <= fare.value("per_minute").toDouble() / 60 + 0.011,
                 done.body.constData());
    QCOMPARE(readBooking(http, id, token).json().value("eta_s").toDouble(), 0.0);
    QCOMPARE(server.stop(), 0);
}

void BookingLifecycleTest::tripWithoutDropoffDrivesSomewhereAndIsMetered()
{
    QTemporaryDir dir;
    ServerProcess server(
        serverArgs(dir, {QStringLiteral("--cars"), QStringLiteral("60"), QStringLiteral("--sim-speed"),
                         QStringLiteral("30"), QStringLiteral("--pickup-timeout"), QStringLiteral("36000")}));
    QVERIFY2(server.start(20'000), qPrintable(server.error()));
    HttpClient http(server.host(), server.port());
    const HttpResponse booked = http.postJson("/api/v1/bookings", {{"rider_id", "anywhere"}, {"pickup", kPickup}});
    TC_VERIFY_STATUS(booked, 201);
    const qint64 id = bookingId(booked);
    const QByteArray token = riderToken(booked.json());
    QJsonObject last;
    QVERIFY2(eventually([&] {
                 last = readBooking(http, id, token).json();
                 return last.value("state").toString() == QStringLiteral("arriving");
             }),
             QJsonDocument(last).toJson().constData());
    TC_VERIFY_STATUS(moveBooking(http, id, "pickup", token), 200);
    // The car chooses where to go and drives there; the meter runs.
    QVERIFY2(eventually([&] {
                 last = readBooking(http, id, token).json();
                 return last.value("destination").isObject() && last.value("distance_m").toDouble() > 300;
             }),
             QJsonDocument(last).toJson().constData());
    const HttpResponse done = moveBooking(http, id, "complete", token);
    TC_VERIFY_STATUS(done, 200);
    QVERIFY2(done.json().value("distance_m").toDouble() > 300, done.body.constData());
    QVERIFY2(done.json().value("fare").toObject().value("distance_charge").toDouble() > 0, done.body.constData());

    // The trips list gives its distance to 0.1 m.
    QJsonArray trips;
    QVERIFY(eventually([&] {
        trips = http.get("/api/v1/trips").json().value("trips").toArray();
        return !trips.isEmpty();
    }));
    for (const QJsonValue &t : trips) {
        const double tenths = t.toObject().value("distance_m").toDouble() * 10;
        QVERIFY2(std::abs(tenths - std::round(tenths)) < 1e-6, QJsonDocument(t.toObject()).toJson().constData());
    }
    QCOMPARE(server.stop(), 0);
}

void BookingLifecycleTest::endedBookingIsAnsweredAfterRestart()
{
    QTemporaryDir dir;
    // The demand generator books ~10 rides a second in each run.
    const QStringList args = serverArgs(
        dir, {QStringLiteral("--cars"), QStringLiteral("60"), QStringLiteral("--demand-rate"), QStringLiteral("600")});
    const QString demandRiders = QStringLiteral("SELECT count(*) FROM bookings WHERE rider_id LIKE 'demand-%'");
    qint64 id = 0;
    QByteArray token;
    int firstRunRiders = 0;
    {
        ServerProcess first(args);
        QVERIFY2(first.start(20'000), qPrintable(first.error()));
        HttpClient http(first.host(), first.port());
        const HttpResponse booked = http.postJson("/api/v1/bookings", {{"rider_id", "gone"}, {"pickup", kPickup}});
        TC_VERIFY_STATUS(booked, 201);
        id = bookingId(booked);
        token = riderToken(booked.json());
        TC_VERIFY_STATUS(moveBooking(http, id, "cancel", token), 200);
        // The generator's riders of this run are in the ledger (was a fixed second).
        QVERIFY2(eventually([&] { return ledgerValue(dir, demandRiders).toInt() >= kRidersPerRun; }),
                 "the demand generator booked no rides");
        QCOMPARE(first.stop(), 0);
        firstRunRiders = ledgerValue(dir, demandRiders).toInt();
    }
    ServerProcess second(args);
    QVERIFY2(second.start(20'000), qPrintable(second.error()));
    HttpClient http(second.host(), second.port());
    const HttpResponse again = readBooking(http, id, token);
    TC_VERIFY_STATUS(again, 200);
    QCOMPARE(again.json().value("state").toString(), QStringLiteral("cancelled"));
    QCOMPARE(again.json().value("rider_id").toString(), QStringLiteral("gone"));
    QCOMPARE(again.json().value("from_ledger").toBool(), true);
    TC_VERIFY_ERROR(readBooking(http, id + 100'000, token), 404, "booking_not_found");

    // Each run's generated riders are its own: no rider id of the first run comes back.
    QVERIFY2(eventually([&] { return ledgerValue(dir, demandRiders).toInt() >= firstRunRiders + kRidersPerRun; }),
             "the demand generator booked no rides after the restart");
    QCOMPARE(second.stop(), 0);
    const int riders = ledgerValue(dir, demandRiders).toInt();
    const int distinct =
        ledgerValue(dir, QStringLiteral("SELECT count(DISTINCT rider_id) FROM bookings WHERE rider_id LIKE 'demand-%'"))
            .toInt();
    QVERIFY2(riders >= 10, qPrintable(QString::number(riders)));
    QCOMPARE(distinct, riders);
}

QTEST_MAIN(BookingLifecycleTest)
#include "trip_booking_lifecycle_test.moc"
