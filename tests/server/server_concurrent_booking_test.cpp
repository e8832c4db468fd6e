// 200 riders book at once for 50 cars, each on its own connection: the atomic reservation gives
// exactly 50 bookings on 50 different cars, and 150 × 409 no_car_available.

#include "ApiAssert.h"
#include "HttpBatch.h"
#include "HttpClient.h"
#include "ServerProcess.h"

#include <QJsonArray>
#include <QTest>
#include <memory>

using namespace taxicore::test;

namespace {
constexpr int kCars = 50;
constexpr int kRiders = 200;
} // namespace

class ConcurrentBookingTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void twoHundredRidersGetExactlyFiftyCars_data();
    void twoHundredRidersGetExactlyFiftyCars();
};

void ConcurrentBookingTest::twoHundredRidersGetExactlyFiftyCars_data()
{
    QTest::addColumn<QString>("mode");
    QTest::newRow("single") << QStringLiteral("single");
    QTest::newRow("pool") << QStringLiteral("pool");
}

void ConcurrentBookingTest::twoHundredRidersGetExactlyFiftyCars()
{
    QFETCH(QString, mode);
    ServerProcess server({QStringLiteral("--cars"), QString::number(kCars), QStringLiteral("--mode"), mode,
                          QStringLiteral("--sim-speed"), QStringLiteral("0.001")});
    QVERIFY2(server.start(), qPrintable(server.error()));

    const QList<QByteArray> requests = bookingBurst(kRiders);
    const QList<HttpResponse> responses = sendConcurrently(server.host(), server.port(), requests, 60'000);
    QCOMPARE(responses.size(), kRiders);

    int booked = 0, refused = 0;
    QSet<int> cars;
    QSet<qint64> bookings;
    QStringList unexpected;
    for (const HttpResponse &r : responses) {
        if (r.complete && r.status == 201) {
            ++booked;
            cars.insert(r.json().value("car_id").toInt());
            bookings.insert(qint64(r.json().value("booking_id").toDouble()));
        } else if (r.complete && r.status == 409
                   && r.json().value("error").toString() == QStringLiteral("no_car_available")
                   && !r.json().value("message").toString().isEmpty()) {
            ++refused;
        } else {
            unexpected.append(QString::fromUtf8(r.describe()));
        }
    }
    QVERIFY2(
        unexpected.isEmpty(),
        qPrintable(QStringLiteral("%1 unexpected answers, first: %2").arg(unexpected.size()).arg(unexpected.value(0))));
    QCOMPARE(booked, kCars);
    QCOMPARE(refused, kRiders - kCars);
    QCOMPARE(cars.size(), kCars); // never two bookings on one car
    QCOMPARE(bookings.size(), kCars);

    // The store agrees: no car is left available, and every car's booking is one of ours.
    HttpClient http(server.host(), server.port());
    const HttpResponse fleet = http.get("/api/v1/cars/nearby?lat=57.7&lng=11.97&radius_m=50000&limit=1000");
    TC_VERIFY_STATUS(fleet, 200);
    const QJsonArray all = fleet.json().value("cars").toArray();
    QCOMPARE(all.size(), kCars);
    for (const QJsonValue &v : all) {
        const QJsonObject car = v.toObject();
        QVERIFY2(car.value("state").toString() != QStringLiteral("available"),
                 qPrintable(car.value("state").toString()));
        QVERIFY(bookings.contains(qint64(car.value("booking_id").toDouble())));
    }
    QVERIFY2(server.isRunning(), server.stderrText().constData());
    QCOMPARE(server.stop(), 0);
}

QTEST_GUILESS_MAIN(ConcurrentBookingTest)
#include "server_concurrent_booking_test.moc"
