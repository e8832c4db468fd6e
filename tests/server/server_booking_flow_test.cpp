// The booking state machine over HTTP: book → assigned → arriving → on_trip → completed, cancel,
// the 409s of illegal moves, and the 400/404s of bad booking requests. The server runs with
// --sim-speed 0.001 so the simulator barely moves cars; the test's PUTs decide where cars are.

#include "ApiAssert.h"
#include "HttpClient.h"
#include "RiderToken.h"
#include "ServerProcess.h"

#include <QHash>
#include <QJsonArray>
#include <QTest>
#include <cmath>
#include <memory>

using namespace taxicore::test;

namespace {

constexpr int kCars = 20;
constexpr double kMetreLat = 1.0 / 111'195.0; // degrees of latitude per metre

QJsonObject point(double lat, double lng)
{
    return {{"lat", lat}, {"lng", lng}};
}

QByteArray bookingPath(qint64 id, const QByteArray &action = {})
{
    return "/api/v1/bookings/" + QByteArray::number(id) + (action.isEmpty() ? QByteArray() : "/" + action);
}

} // namespace

class BookingFlowTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void bookReservesTheNearestAvailableCar();
    void bookWithDropoffIncludesAQuote();
    void wholeTripFromBookingToReceipt();
    void cancelWhileAssignedFreesTheCar();
    void cancelWhileArrivingIsAllowed();
    void unknownBookingIs404();
    void nonNumericBookingIdIs400_data();
    void nonNumericBookingIdIs400();
    void badBookingRequestIs400_data();
    void badBookingRequestIs400();
    void riderIdOfMaximumLengthIsAccepted();
    void riderIdRoundTripsExactlyOrIsRefused_data();
    void riderIdRoundTripsExactlyOrIsRefused();

private:
    // Books at `pickup` (and `dropoff` unless empty); verifies the 201 and fills `booking`.
    void book(const QJsonObject &pickup, const QJsonObject &dropoff, QJsonObject &booking);
    void fetchBooking(qint64 id, QJsonObject &booking);
    // pickup, complete or cancel booking `id` as its rider (with the rider token book() kept).
    HttpResponse move(qint64 id, const QByteArray &action);
    // The car as nearby reports it around (lat, lng); empty when it is not there.
    QJsonObject carInNearby(int carId, double lat, double lng);

    std::unique_ptr<ServerProcess> m_server;
    std::unique_ptr<HttpClient> m_http;
    int m_riders = 0;
    QHash<qint64, QByteArray> m_riderTokens; // booking id → its rider token
};

#define TC_CHECK_HELPER(call)                                                                                          \
    do {                                                                                                               \
        call;                                                                                                          \
        if (QTest::currentTestFailed())                                                                                \
            return;                                                                                                    \
    } while (false)

void BookingFlowTest::initTestCase()
{
    m_server = std::make_unique<ServerProcess>(QStringList{QStringLiteral("--cars"), QString::number(kCars),
                                                           QStringLiteral("--sim-speed"), QStringLiteral("0.001")});
    QVERIFY2(m_server->start(), qPrintable(m_server->error()));
    m_http = std::make_unique<HttpClient>(m_server->host(), m_server->port());
}

void BookingFlowTest::cleanupTestCase()
{
    m_http.reset();
    if (m_server) {
        QVERIFY2(m_server->isRunning(), "the server died during the tests: " + m_server->stderrText());
        QCOMPARE(m_server->stop(), 0);
    }
}

void BookingFlowTest::book(const QJsonObject &pickup, const QJsonObject &dropoff, QJsonObject &booking)
{
    QJsonObject body{{"rider_id", QStringLiteral("rider-%1").arg(++m_riders)}, {"pickup", pickup}};
    if (!dropoff.isEmpty())
        body.insert("dropoff", dropoff);
    const HttpResponse r = m_http->postJson("/api/v1/bookings", body);
    TC_VERIFY_STATUS(r, 201);
    booking = r.json();
    QCOMPARE(booking.value("state").toString(), QStringLiteral("assigned"));
    QVERIFY2(booking.value("booking_id").toDouble() > 0, r.body.constData());
    QVERIFY2(booking.value("car_id").toInt() > 0, r.body.constData());
    QCOMPARE(booking.value("car").toObject().value("id").toInt(), booking.value("car_id").toInt());
    QVERIFY2(booking.value("eta_s").isDouble() && booking.value("eta_s").toDouble() >= 0, r.body.constData());
    QCOMPARE(booking.value("rider_id").toString(), body.value("rider_id").toString());
    QCOMPARE(r.header("Location"), bookingPath(qint64(booking.value("booking_id").toDouble())));
    QVERIFY2(riderToken(booking).size() >= 32, r.body.constData());
    m_riderTokens.insert(qint64(booking.value("booking_id").toDouble()), riderToken(booking));
    const QJsonObject p = booking.value("pickup").toObject();
    QVERIFY(std::abs(p.value("lat").toDouble() - pickup.value("lat").toDouble()) < 1e-6);
    QVERIFY(std::abs(p.value("lng").toDouble() - pickup.value("lng").toDouble()) < 1e-6);
}

HttpResponse BookingFlowTest::move(qint64 id, const QByteArray &action)
{
    return moveBooking(*m_http, id, action, m_riderTokens.value(id, QByteArrayLiteral("no-token-kept")));
}

void BookingFlowTest::fetchBooking(qint64 id, QJsonObject &booking)
{
    const HttpResponse r = readBooking(*m_http, id, m_riderTokens.value(id, QByteArrayLiteral("no-token-kept")));
    TC_VERIFY_STATUS(r, 200);
    booking = r.json();
    QCOMPARE(qint64(booking.value("booking_id").toDouble()), id);
}

QJsonObject BookingFlowTest::carInNearby(int carId, double lat, double lng)
{
    const HttpResponse r = m_http->get("/api/v1/cars/nearby?lat=" + QByteArray::number(lat, 'f', 6)
                                       + "&lng=" + QByteArray::number(lng, 'f', 6) + "&radius_m=50000&limit=1000");
    for (const QJsonValue &v : r.json().value("cars").toArray()) {
        if (v.toObject().value("id").toInt() == carId)
            return v.toObject();
    }
    return {};
}

void BookingFlowTest::bookReservesTheNearestAvailableCar()
{
    // Put car 5 right next to a pickup point far from the simulated inner city, so it is the
    // nearest car whatever the seed put elsewhere.
    const double lat = 57.7650, lng = 12.1000;
    TC_VERIFY_STATUS(m_http->putJson("/api/v1/cars/5/position", point(lat + 20 * kMetreLat, lng)), 200);
    QJsonObject booking;
    TC_CHECK_HELPER(book(point(lat, lng), {}, booking));
    QCOMPARE(booking.value("car_id").toInt(), 5);
    QVERIFY2(!booking.contains("quote"), "a booking without dropoff has no quote");
    // The car is now reserved: nearby reports it as not available.
    const QJsonObject car = carInNearby(5, lat, lng);
    QVERIFY(!car.isEmpty());
    QVERIFY2(car.value("state").toString() != QStringLiteral("available"), qPrintable(car.value("state").toString()));
    // A second booking at the same point gets another car.
    QJsonObject second;
    TC_CHECK_HELPER(book(point(lat, lng), {}, second));
    QVERIFY(second.value("car_id").toInt() != 5);
    for (const QJsonObject &b : {booking, second})
        TC_VERIFY_STATUS(move(qint64(b.value("booking_id").toDouble()), "cancel"), 200);
}

void BookingFlowTest::bookWithDropoffIncludesAQuote()
{
    QJsonObject booking;
    TC_CHECK_HELPER(book(point(57.7089, 11.9746), point(57.6900, 11.9800), booking));
    const QJsonObject quote = booking.value("quote").toObject();
    QVERIFY2(!quote.isEmpty(), "no quote for a booking with a dropoff");
    QVERIFY(quote.value("total").toDouble() >= quote.value("minimum").toDouble());
    QVERIFY(!quote.value("currency").toString().isEmpty());
    const QJsonObject dropoff = booking.value("dropoff").toObject();
    QVERIFY(std::abs(dropoff.value("lat").toDouble() - 57.69) < 1e-6);
    TC_VERIFY_STATUS(move(qint64(booking.value("booking_id").toDouble()), "cancel"), 200);
}

void BookingFlowTest::wholeTripFromBookingToReceipt()
{
    const double pickupLat = 57.7000, pickupLng = 11.9500;
    QJsonObject booking;
    TC_CHECK_HELPER(book(point(pickupLat, pickupLng), point(57.7100, 11.9500), booking));
    const qint64 id = qint64(booking.value("booking_id").toDouble());
    const int carId = booking.value("car_id").toInt();
    const QByteArray carPath = "/api/v1/cars/" + QByteArray::number(carId) + "/position";

    QJsonObject current;
    TC_CHECK_HELPER(fetchBooking(id, current));
    QCOMPARE(current.value("state").toString(), QStringLiteral("assigned"));
    QCOMPARE(current.value("car_id").toInt(), carId);
    QCOMPARE(current.value("car").toObject().value("id").toInt(), carId);

    // Pickup before the car has arrived is illegal, and the answer names the current state.
    const HttpResponse early = move(id, "pickup");
    TC_VERIFY_ERROR(early, 409, "illegal_transition");
    QCOMPARE(early.json().value("state").toString(), QStringLiteral("assigned"));
    QVERIFY2(early.json().value("message").toString().contains(QStringLiteral("assigned")), early.body.constData());
    // Completing a trip that has not started is illegal too.
    TC_VERIFY_ERROR(move(id, "complete"), 409, "illegal_transition");

    // The car's device reports it at the pickup point: the booking is arriving.
    TC_VERIFY_STATUS(m_http->putJson(carPath, point(pickupLat, pickupLng)), 200);
    TC_CHECK_HELPER(fetchBooking(id, current));
    QCOMPARE(current.value("state").toString(), QStringLiteral("arriving"));

    const HttpResponse pickedUp = move(id, "pickup");
    TC_VERIFY_STATUS(pickedUp, 200);
    QCOMPARE(pickedUp.json().value("state").toString(), QStringLiteral("on_trip"));
    TC_VERIFY_ERROR(move(id, "pickup"), 409, "illegal_transition");

    // The car drives ~1 km north: the running trip shows the distance so far and a fare.
    const double tripLat = pickupLat + 1000 * kMetreLat;
    TC_VERIFY_STATUS(m_http->putJson(carPath, point(pickupLat + 500 * kMetreLat, pickupLng)), 200);
    TC_VERIFY_STATUS(m_http->putJson(carPath, point(tripLat, pickupLng)), 200);
    TC_CHECK_HELPER(fetchBooking(id, current));
    QCOMPARE(current.value("state").toString(), QStringLiteral("on_trip"));
    QVERIFY2(std::abs(current.value("distance_m").toDouble() - 1000) <= 5, QJsonDocument(current).toJson().constData());
    const QJsonObject runningFare = current.value("fare").toObject();
    QVERIFY2(runningFare.value("total").toDouble() >= runningFare.value("minimum").toDouble()
                 && runningFare.value("total").toDouble() > 0,
             QJsonDocument(current).toJson().constData());

    // The rider leaves: the receipt.
    const HttpResponse done = move(id, "complete");
    TC_VERIFY_STATUS(done, 200);
    const QJsonObject receipt = done.json();
    QCOMPARE(receipt.value("state").toString(), QStringLiteral("completed"));
    const double distance = receipt.value("distance_m").toDouble(-1);
    const double duration = receipt.value("duration_s").toDouble(-1);
    QVERIFY2(std::abs(distance - 1000) <= 5, done.body.constData());
    QVERIFY2(duration >= 0 && duration < 60, done.body.constData());
    const QJsonObject fare = receipt.value("fare").toObject();
    const double expected = std::max(fare.value("minimum").toDouble(),
                                     fare.value("base").toDouble() + fare.value("per_km").toDouble() * distance / 1000
                                         + fare.value("per_minute").toDouble() * duration / 60);
    QVERIFY2(std::abs(fare.value("total").toDouble() - expected) <= 0.1, done.body.constData());

    // Finished is finished: every further move is a 409 naming "completed".
    for (const QByteArray action : {"cancel", "pickup", "complete"}) {
        const HttpResponse late = move(id, action);
        TC_VERIFY_ERROR(late, 409, "illegal_transition");
        QCOMPARE(late.json().value("state").toString(), QStringLiteral("completed"));
        QVERIFY2(late.json().value("message").toString().contains(QStringLiteral("completed")), late.body.constData());
    }
    TC_CHECK_HELPER(fetchBooking(id, current));
    QCOMPARE(current.value("state").toString(), QStringLiteral("completed"));
    QCOMPARE(current.value("distance_m").toDouble(), distance);
    QCOMPARE(current.value("fare").toObject().value("total").toDouble(), fare.value("total").toDouble());

    // The completed booking has freed its car.
    const QJsonObject car = carInNearby(carId, tripLat, pickupLng);
    QCOMPARE(car.value("state").toString(), QStringLiteral("available"));
}

void BookingFlowTest::cancelWhileAssignedFreesTheCar()
{
    QJsonObject booking;
    TC_CHECK_HELPER(book(point(57.7200, 11.9900), {}, booking));
    const qint64 id = qint64(booking.value("booking_id").toDouble());
    const int carId = booking.value("car_id").toInt();
    QVERIFY(carInNearby(carId, 57.72, 11.99).value("state").toString() != QStringLiteral("available"));

    const HttpResponse cancelled = move(id, "cancel");
    TC_VERIFY_STATUS(cancelled, 200);
    QCOMPARE(cancelled.json().value("state").toString(), QStringLiteral("cancelled"));
    QJsonObject current;
    TC_CHECK_HELPER(fetchBooking(id, current));
    QCOMPARE(current.value("state").toString(), QStringLiteral("cancelled"));
    QCOMPARE(carInNearby(carId, 57.72, 11.99).value("state").toString(), QStringLiteral("available"));

    const HttpResponse again = move(id, "cancel");
    TC_VERIFY_ERROR(again, 409, "illegal_transition");
    QCOMPARE(again.json().value("state").toString(), QStringLiteral("cancelled"));
    TC_VERIFY_ERROR(move(id, "pickup"), 409, "illegal_transition");
}

void BookingFlowTest::cancelWhileArrivingIsAllowed()
{
    const double lat = 57.6950, lng = 11.9300;
    QJsonObject booking;
    TC_CHECK_HELPER(book(point(lat, lng), {}, booking));
    const qint64 id = qint64(booking.value("booking_id").toDouble());
    const int carId = booking.value("car_id").toInt();
    TC_VERIFY_STATUS(m_http->putJson("/api/v1/cars/" + QByteArray::number(carId) + "/position", point(lat, lng)), 200);
    QJsonObject current;
    TC_CHECK_HELPER(fetchBooking(id, current));
    QCOMPARE(current.value("state").toString(), QStringLiteral("arriving"));
    const HttpResponse cancelled = move(id, "cancel");
    TC_VERIFY_STATUS(cancelled, 200);
    QCOMPARE(cancelled.json().value("state").toString(), QStringLiteral("cancelled"));
    QCOMPARE(carInNearby(carId, lat, lng).value("state").toString(), QStringLiteral("available"));
}

void BookingFlowTest::unknownBookingIs404()
{
    TC_VERIFY_ERROR(readBooking(*m_http, 987654321, "some-rider-token"), 404, "booking_not_found");
    for (const QByteArray action : {"pickup", "complete", "cancel"})
        TC_VERIFY_ERROR(move(987654321, action), 404, "booking_not_found");
}

void BookingFlowTest::nonNumericBookingIdIs400_data()
{
    QTest::addColumn<QByteArray>("method");
    QTest::addColumn<QByteArray>("path");
    QTest::newRow("GET x") << QByteArray("GET") << QByteArray("/api/v1/bookings/x");
    QTest::newRow("GET 0") << QByteArray("GET") << QByteArray("/api/v1/bookings/0");
    QTest::newRow("GET -3") << QByteArray("GET") << QByteArray("/api/v1/bookings/-3");
    QTest::newRow("GET 1.5") << QByteArray("GET") << QByteArray("/api/v1/bookings/1.5");
    // Only the id's own digits name it: the old parser took each of these for booking 1.
    QTest::newRow("GET 1 NUL") << QByteArray("GET") << QByteArray("/api/v1/bookings/1%00");
    QTest::newRow("GET +1") << QByteArray("GET") << QByteArray("/api/v1/bookings/%2B1");
    QTest::newRow("GET space 1") << QByteArray("GET") << QByteArray("/api/v1/bookings/%201");
    QTest::newRow("GET 1 space") << QByteArray("GET") << QByteArray("/api/v1/bookings/1%20");
    QTest::newRow("GET 01") << QByteArray("GET") << QByteArray("/api/v1/bookings/01");
    QTest::newRow("GET 2^64") << QByteArray("GET") << QByteArray("/api/v1/bookings/18446744073709551616");
    QTest::newRow("cancel 1 tab") << QByteArray("POST") << QByteArray("/api/v1/bookings/1%09/cancel");
    QTest::newRow("pickup x") << QByteArray("POST") << QByteArray("/api/v1/bookings/x/pickup");
    QTest::newRow("complete x") << QByteArray("POST") << QByteArray("/api/v1/bookings/x/complete");
    QTest::newRow("cancel x") << QByteArray("POST") << QByteArray("/api/v1/bookings/x/cancel");
}

void BookingFlowTest::nonNumericBookingIdIs400()
{
    QFETCH(QByteArray, method);
    QFETCH(QByteArray, path);
    TC_VERIFY_ERROR(m_http->request(method, path, {}), 400, "invalid_id");
}

void BookingFlowTest::badBookingRequestIs400_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QByteArray>("code");
    const QByteArray pickup = "\"pickup\":{\"lat\":57.70,\"lng\":11.97}";
    QTest::newRow("rider_id missing") << "{" + pickup + "}" << QByteArray("invalid_rider_id");
    QTest::newRow("rider_id empty") << "{\"rider_id\":\"\"," + pickup + "}" << QByteArray("invalid_rider_id");
    QTest::newRow("rider_id a number") << "{\"rider_id\":42," + pickup + "}" << QByteArray("invalid_rider_id");
    QTest::newRow("rider_id 64 bytes") << "{\"rider_id\":\"" + QByteArray(64, 'r') + "\"," + pickup + "}"
                                       << QByteArray("invalid_rider_id");
    QTest::newRow("rider_id 64 UTF-8 bytes")
        << "{\"rider_id\":\"" + QString(32, QChar(0xe9)).toUtf8() + "\"," + pickup + "}"
        << QByteArray("invalid_rider_id");
    QTest::newRow("rider_id 1000 bytes") << "{\"rider_id\":\"" + QByteArray(1000, 'r') + "\"," + pickup + "}"
                                         << QByteArray("invalid_rider_id");
    QTest::newRow("pickup missing") << QByteArray("{\"rider_id\":\"r\"}") << QByteArray("missing_field");
    QTest::newRow("pickup not an object")
        << QByteArray("{\"rider_id\":\"r\",\"pickup\":[57.7,11.97]}") << QByteArray("not_an_object");
    QTest::newRow("pickup lat missing") << QByteArray("{\"rider_id\":\"r\",\"pickup\":{\"lng\":11.97}}")
                                        << QByteArray("missing_field");
    QTest::newRow("pickup lat a string") << QByteArray(
        "{\"rider_id\":\"r\",\"pickup\":{\"lat\":\"57.7\",\"lng\":11.97}}")
                                         << QByteArray("not_a_number");
    QTest::newRow("pickup outside the area")
        << QByteArray("{\"rider_id\":\"r\",\"pickup\":{\"lat\":55.60,\"lng\":13.00}}")
        << QByteArray("outside_service_area");
    QTest::newRow("pickup out of range") << QByteArray("{\"rider_id\":\"r\",\"pickup\":{\"lat\":-100,\"lng\":13.00}}")
                                         << QByteArray("out_of_range");
    QTest::newRow("dropoff outside the area") << "{\"rider_id\":\"r\"," + pickup + ",\"dropoff\":{\"lat\":0,\"lng\":0}}"
                                              << QByteArray("outside_service_area");
    QTest::newRow("malformed JSON") << QByteArray("{\"rider_id\":\"r\",") << QByteArray("malformed_json");
    QTest::newRow("empty body") << QByteArray() << QByteArray("missing_body");
}

void BookingFlowTest::badBookingRequestIs400()
{
    QFETCH(QByteArray, body);
    QFETCH(QByteArray, code);
    const HttpResponse before = m_http->get("/api/v1/cars/nearby?lat=57.7&lng=11.97&radius_m=50000&limit=1000");
    TC_VERIFY_ERROR(m_http->post("/api/v1/bookings", body), 400, code.constData());
    // A refused booking reserves no car.
    const HttpResponse after = m_http->get("/api/v1/cars/nearby?lat=57.7&lng=11.97&radius_m=50000&limit=1000");
    const auto available = [](const HttpResponse &r) {
        int n = 0;
        for (const QJsonValue &v : r.json().value("cars").toArray())
            n += v.toObject().value("state").toString() == QStringLiteral("available");
        return n;
    };
    QCOMPARE(available(after), available(before));
}

void BookingFlowTest::riderIdOfMaximumLengthIsAccepted()
{
    const QString rider(63, QChar('m'));
    const HttpResponse r = m_http->postJson("/api/v1/bookings", {{"rider_id", rider}, {"pickup", point(57.70, 11.97)}});
    TC_VERIFY_STATUS(r, 201);
    QCOMPARE(r.json().value("rider_id").toString(), rider);
    TC_VERIFY_STATUS(
        moveBooking(*m_http, qint64(r.json().value("booking_id").toDouble()), "cancel", riderToken(r.json())), 200);
}

void BookingFlowTest::riderIdRoundTripsExactlyOrIsRefused_data()
{
    QTest::addColumn<QString>("rider");
    QTest::newRow("non-ASCII") << QStringLiteral("\u00c5sa \u00d6berg \U0001F695");
    QTest::newRow("spaces and quotes") << QStringLiteral(" \"rider\" 7 ");
    QTest::newRow("leading NUL") << QStringLiteral("\u0000abc");
    QTest::newRow("trailing NUL") << QStringLiteral("abc\u0000");
}

void BookingFlowTest::riderIdRoundTripsExactlyOrIsRefused()
{
    // A rider id the server accepts is the rider id it stores and returns; anything it cannot
    // store faithfully is refused with 400 invalid_rider_id.
    QFETCH(QString, rider);
    const HttpResponse r = m_http->postJson("/api/v1/bookings", {{"rider_id", rider}, {"pickup", point(57.70, 11.97)}});
    QVERIFY2(r.complete, qPrintable(r.error));
    if (rider.contains(QChar(0))) { // cannot be stored faithfully: must be refused
        TC_VERIFY_ERROR(r, 400, "invalid_rider_id");
        return;
    }
    TC_VERIFY_STATUS(r, 201);
    const qint64 id = qint64(r.json().value("booking_id").toDouble());
    m_riderTokens.insert(id, riderToken(r.json()));
    QJsonObject stored;
    TC_CHECK_HELPER(fetchBooking(id, stored));
    TC_VERIFY_STATUS(moveBooking(*m_http, id, "cancel", riderToken(r.json())), 200);
    QCOMPARE(stored.value("rider_id").toString(), rider);
    QCOMPARE(r.json().value("rider_id").toString(), stored.value("rider_id").toString());
}

QTEST_GUILESS_MAIN(BookingFlowTest)
#include "server_booking_flow_test.moc"
