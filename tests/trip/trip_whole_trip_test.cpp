// A whole trip over HTTP on the bundled city (issue 4): a real taxicore-server with fast
// simulated time; the booked car drives to the pickup along the roads (every reported position
// snaps to a road within metres), the booking becomes arriving (recorded in the ledger), the
// rider gets in, the car drives to the drop-off, the rider leaves, and the fare charged is the
// quote, which follows max(minimum, base + per_km·km + per_min·min) × surge.

#include "city/City.h"
#include "city/Geo.h"

#include "ApiAssert.h"
#include "HttpClient.h"
#include "ServerProcess.h"

#include <QElapsedTimer>
#include <QJsonDocument>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <cmath>
#include <random>

using namespace taxicore;
using namespace taxicore::test;

namespace {

constexpr int kArriveTimeoutMs = 25'000;
constexpr int kDriveTimeoutMs = 30'000;
constexpr int kPollMs = 100;
// A car between two shape points of a road is on the straight piece joining them.
constexpr double kOnRoadM = 5.0;

QJsonObject point(LatLng p)
{
    return {{"lat", p.lat}, {"lng", p.lng}};
}

LatLng latLng(const QJsonObject &o)
{
    return {o.value("lat").toDouble(), o.value("lng").toDouble()};
}

double cents(double v)
{
    return std::round(v * 100) / 100;
}

Headers bearer(const QByteArray &token)
{
    return {{QByteArrayLiteral("Authorization"), QByteArrayLiteral("Bearer ") + token}};
}

} // namespace

class WholeTripTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void bookRideAndPay();

private:
    // Checks a fare breakdown against the tariff's formula.
    void verifyFormula(const QJsonObject &fare, const QJsonObject &tariff, double distanceM, double durationS);
    std::shared_ptr<const city::City> m_city;
};

void WholeTripTest::initTestCase()
{
    const auto loaded = city::City::load(QStringLiteral(TAXICORE_SOURCE_DIR "/resources/cities/gothenburg.taxicity"));
    QVERIFY2(loaded.city, qPrintable(loaded.error));
    m_city = loaded.city;
}

void WholeTripTest::verifyFormula(const QJsonObject &fare, const QJsonObject &tariff, double distanceM,
                                  double durationS)
{
    const double perKm = tariff.value("per_km").toDouble();
    const double perMin = tariff.value("per_min").toDouble();
    const double base = tariff.value("base").toDouble();
    const double minimum = tariff.value("minimum").toDouble();
    const double surge = fare.value("surge").toDouble();
    QVERIFY(surge >= 1.0 && surge <= tariff.value("surge_cap").toDouble());
    QCOMPARE(fare.value("base").toDouble(), base);
    // distance_m and duration_s are answered rounded to whole units: allow for it.
    QVERIFY(std::abs(fare.value("distance_charge").toDouble() - perKm * distanceM / 1000) <= perKm * 0.0005 + 0.011);
    QVERIFY(std::abs(fare.value("time_charge").toDouble() - perMin * durationS / 60) <= perMin / 120 + 0.011);
    const double metered = base + fare.value("distance_charge").toDouble() + fare.value("time_charge").toDouble();
    QCOMPARE(fare.value("total").toDouble(), cents(std::max(minimum, metered) * surge));
}

void WholeTripTest::bookRideAndPay()
{
    QTemporaryDir dir;
    // 40 cars over the city, 40× simulated time: the nearest car is a few minutes away.
    ServerProcess server({QStringLiteral("--cars"), QStringLiteral("40"), QStringLiteral("--sim-speed"),
                          QStringLiteral("40"), QStringLiteral("--seed"), QStringLiteral("11"),
                          QStringLiteral("--data-dir"), dir.path()});
    QVERIFY2(server.start(20'000), qPrintable(server.error()));
    HttpClient http(server.host(), server.port());

    // Pickup and drop-off on roads, 1.5 to 4 km apart.
    std::mt19937_64 random(7);
    LatLng pickup{}, dropoff{};
    for (int tries = 0; tries < 1000; ++tries) {
        const city::RoadPoint a = m_city->randomRoadPoint(random);
        const city::RoadPoint b = m_city->randomRoadPoint(random);
        pickup = {a.point.lat, a.point.lng};
        dropoff = {b.point.lat, b.point.lng};
        const double d = city::haversineMeters(pickup, dropoff);
        if (d > 1500 && d < 4000 && city::haversineMeters(pickup, {57.7, 11.97}) < 3000)
            break;
    }
    const HttpResponse tariffAnswer = http.get("/admin/v1/tariff");
    TC_VERIFY_STATUS(tariffAnswer, 200);
    const QJsonObject tariff = tariffAnswer.json();

    // A quote alone follows the formula and says its surge.
    const QByteArray quotePath = QStringLiteral("/api/v1/quote?from_lat=%1&from_lng=%2&to_lat=%3&to_lng=%4")
                                     .arg(pickup.lat, 0, 'f', 7)
                                     .arg(pickup.lng, 0, 'f', 7)
                                     .arg(dropoff.lat, 0, 'f', 7)
                                     .arg(dropoff.lng, 0, 'f', 7)
                                     .toLatin1();
    const HttpResponse quote = http.get(quotePath);
    TC_VERIFY_STATUS(quote, 200);
    QVERIFY(quote.json().value("surge").toDouble() >= 1.0);
    verifyFormula(quote.json().value("fare").toObject(), tariff, quote.json().value("distance_m").toDouble(),
                  quote.json().value("duration_s").toDouble());
    const double quotedDistanceM = quote.json().value("distance_m").toDouble();

    const HttpResponse booked = http.postJson(
        "/api/v1/bookings", {{"rider_id", "whole-trip"}, {"pickup", point(pickup)}, {"dropoff", point(dropoff)}});
    TC_VERIFY_STATUS(booked, 201);
    const qint64 id = qint64(booked.json().value("booking_id").toDouble());
    const QByteArray token = booked.json().value("rider_token").toString().toLatin1();
    const QJsonObject bookingQuote = booked.json().value("quote").toObject();
    QVERIFY2(bookingQuote.value("total").toDouble() > 0, booked.body.constData());
    const QByteArray path = "/api/v1/bookings/" + QByteArray::number(id);
    const LatLng start = latLng(booked.json().value("car").toObject());

    // The car comes along the roads.
    const auto pollUntil = [&](const QString &state, int timeoutMs, QJsonObject &last, double &farthestOffRoadM,
                               int &positions) {
        QElapsedTimer timer;
        timer.start();
        while (timer.elapsed() < timeoutMs) {
            const HttpResponse r = http.request("GET", path, {}, bearer(token));
            if (r.status != 200)
                return false;
            last = r.json();
            const LatLng at = latLng(last.value("car").toObject());
            farthestOffRoadM = std::max(farthestOffRoadM, m_city->snap({at.lat, at.lng}).distanceM);
            ++positions;
            if (last.value("state").toString() == state)
                return true;
            QThread::msleep(kPollMs);
        }
        return false;
    };
    QJsonObject current;
    double offRoadM = 0;
    int positions = 0;
    QVERIFY2(pollUntil(QStringLiteral("arriving"), kArriveTimeoutMs, current, offRoadM, positions),
             QJsonDocument(current).toJson().constData());
    const LatLng arrived = latLng(current.value("car").toObject());
    QVERIFY2(city::haversineMeters(start, arrived) > 50, "the car did not move");
    QVERIFY(city::haversineMeters(arrived, pickup) <= 40);
    QVERIFY2(offRoadM < kOnRoadM, qPrintable(QStringLiteral("a position was %1 m off the road").arg(offRoadM)));
    QVERIFY(positions >= 3);

    // The rider gets in; the car drives to the drop-off and stops there.
    const HttpResponse picked = http.request("POST", path + "/pickup", {}, bearer(token));
    TC_VERIFY_STATUS(picked, 200);
    QCOMPARE(picked.json().value("state").toString(), QStringLiteral("on_trip"));
    QElapsedTimer driving;
    driving.start();
    bool atDropoff = false;
    while (!atDropoff && driving.elapsed() < kDriveTimeoutMs) {
        const HttpResponse r = http.request("GET", path, {}, bearer(token));
        TC_VERIFY_STATUS(r, 200);
        const QJsonObject car = r.json().value("car").toObject();
        const LatLng at = latLng(car);
        offRoadM = std::max(offRoadM, m_city->snap({at.lat, at.lng}).distanceM);
        atDropoff = city::haversineMeters(at, dropoff) < 15 && car.value("speed_kmh").toDouble() == 0;
        if (!atDropoff)
            QThread::msleep(kPollMs);
    }
    QVERIFY2(atDropoff, "the car did not reach the drop-off in time");
    QVERIFY2(offRoadM < kOnRoadM, qPrintable(QStringLiteral("a position was %1 m off the road").arg(offRoadM)));

    // The rider leaves: the fare charged is the quote given at booking.
    const HttpResponse done = http.request("POST", path + "/complete", {}, bearer(token));
    TC_VERIFY_STATUS(done, 200);
    QCOMPARE(done.json().value("state").toString(), QStringLiteral("completed"));
    const QJsonObject fare = done.json().value("fare").toObject();
    QCOMPARE(fare.value("total").toDouble(), bookingQuote.value("total").toDouble());
    QCOMPARE(fare.value("surge").toDouble(), bookingQuote.value("surge").toDouble());
    // The meter agrees with the route the quote priced (the car drove it).
    const double meteredM = done.json().value("distance_m").toDouble();
    QVERIFY2(std::abs(meteredM - quotedDistanceM) < 0.2 * quotedDistanceM + 100,
             qPrintable(QStringLiteral("metered %1 m, quoted %2 m").arg(meteredM).arg(quotedDistanceM)));
    QCOMPARE(server.stop(), 0);

    // The ledger has every move, the car's arrival included, and the trip's fare.
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("whole-trip"));
        db.setDatabaseName(dir.filePath(QStringLiteral("ledger.sqlite")));
        QVERIFY(db.open());
        QSqlQuery states(db);
        QVERIFY(states.exec(QStringLiteral("SELECT state FROM transitions WHERE booking_id = %1 ORDER BY id").arg(id)));
        QStringList seen;
        while (states.next())
            seen << states.value(0).toString();
        QVERIFY2(seen.contains(QStringLiteral("arriving")), qPrintable(seen.join(u',')));
        QVERIFY2(seen.indexOf(QStringLiteral("arriving")) < seen.indexOf(QStringLiteral("on_trip")),
                 qPrintable(seen.join(u',')));
        QSqlQuery trip(db);
        QVERIFY(trip.exec(QStringLiteral("SELECT fare_total, fare_surge FROM trips WHERE booking_id = %1").arg(id)));
        QVERIFY(trip.next());
        QCOMPARE(trip.value(0).toDouble(), fare.value("total").toDouble());
        db.close();
    }
    QSqlDatabase::removeDatabase(QStringLiteral("whole-trip"));
}

QTEST_GUILESS_MAIN(WholeTripTest)
#include "trip_whole_trip_test.moc"
