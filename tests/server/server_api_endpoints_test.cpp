// API v1, the workload endpoints and the operations endpoints, each over real loopback HTTP
// against a taxicore-server process: happy paths and every error the API promises.

#include "ApiAssert.h"
#include "HttpClient.h"
#include "ServerProcess.h"

#include <QJsonArray>
#include <QRegularExpression>
#include <QTest>
#include <cmath>
#include <memory>

using namespace taxicore::test;

namespace {

constexpr int kCars = 200;
// Inside the bundled city's service area (central Gothenburg).
constexpr double kCentreLat = 57.7089, kCentreLng = 11.9746;

double haversineM(double lat1, double lng1, double lat2, double lng2)
{
    constexpr double r = 6371008.8, rad = 3.141592653589793 / 180.0;
    const double dLat = (lat2 - lat1) * rad, dLng = (lng2 - lng1) * rad;
    const double a = std::sin(dLat / 2) * std::sin(dLat / 2)
                     + std::cos(lat1 * rad) * std::cos(lat2 * rad) * std::sin(dLng / 2) * std::sin(dLng / 2);
    return 2 * r * std::asin(std::min(1.0, std::sqrt(a)));
}

QByteArray nearbyPath(double radius, int limit)
{
    return "/api/v1/cars/nearby?lat=" + QByteArray::number(kCentreLat, 'f', 6)
           + "&lng=" + QByteArray::number(kCentreLng, 'f', 6) + "&radius_m=" + QByteArray::number(radius)
           + "&limit=" + QByteArray::number(limit);
}

} // namespace

class ApiEndpointsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();

    void putPositionReturnsTheCarAtTheReportedPoint();
    void putPositionRejectsBadInput_data();
    void putPositionRejectsBadInput();
    void putPositionForUnknownCarIs404();

    void nearbyIsSortedByDistanceWithAllFields();
    void nearbyHonoursLimit();
    void nearbyHonoursRadius();
    void nearbyRejectsBadQuery_data();
    void nearbyRejectsBadQuery();

    void quoteHasDistanceDurationAndFareBreakdown();
    void quoteRejectsMissingPoint();

    void helloIsPlainTextHelloWorld();
    void fibComputesFibonacci_data();
    void fibComputesFibonacci();
    void fibRejectsOutOfRangeAndNonNumbers_data();
    void fibRejectsOutOfRangeAndNonNumbers();
    void cpuAnswers200();
    void healthzReportsVersionModeUptime();
    void metricsCountsRequestsByRouteAndStatus();
    void wrongMethodIs405WithAllowAndJson();
    void unknownPathIs404Json();

private:
    std::unique_ptr<ServerProcess> m_server;
    std::unique_ptr<HttpClient> m_http;
};

void ApiEndpointsTest::initTestCase()
{
    m_server = std::make_unique<ServerProcess>(QStringList{QStringLiteral("--cars"), QString::number(kCars),
                                                           QStringLiteral("--sim-speed"), QStringLiteral("0.001")});
    QVERIFY2(m_server->start(), qPrintable(m_server->error()));
    m_http = std::make_unique<HttpClient>(m_server->host(), m_server->port());
}

void ApiEndpointsTest::cleanupTestCase()
{
    m_http.reset();
    if (m_server) {
        QVERIFY2(m_server->isRunning(), "the server died during the tests: " + m_server->stderrText());
        QCOMPARE(m_server->stop(), 0);
    }
}

void ApiEndpointsTest::putPositionReturnsTheCarAtTheReportedPoint()
{
    const HttpResponse r = m_http->putJson(
        "/api/v1/cars/7/position", {{"lat", 57.7012345}, {"lng", 11.9654321}, {"heading", 90}, {"speed_kmh", 30}});
    TC_VERIFY_STATUS(r, 200);
    QVERIFY(r.header("Content-Type").startsWith("application/json"));
    const QJsonObject car = r.json();
    QCOMPARE(car.value("id").toInt(), 7);
    QVERIFY2(std::abs(car.value("lat").toDouble() - 57.7012345) < 1e-6, r.body.constData());
    QVERIFY2(std::abs(car.value("lng").toDouble() - 11.9654321) < 1e-6, r.body.constData());
    QCOMPARE(car.value("heading").toDouble(), 90.0);
    QCOMPARE(car.value("speed_kmh").toDouble(), 30.0);
    QVERIFY(car.value("state").isString());

    // The store really holds it: nearby around that point finds car 7 there.
    const HttpResponse n = m_http->get("/api/v1/cars/nearby?lat=57.7012345&lng=11.9654321&radius_m=5&limit=50");
    TC_VERIFY_STATUS(n, 200);
    bool found = false;
    for (const QJsonValue &v : n.json().value("cars").toArray())
        found |= v.toObject().value("id").toInt() == 7;
    QVERIFY2(found, n.body.constData());
}

void ApiEndpointsTest::putPositionRejectsBadInput_data()
{
    QTest::addColumn<QByteArray>("path");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("code");
    const QByteArray car = "/api/v1/cars/3/position";
    QTest::newRow("malformed JSON") << car << QByteArray("{\"lat\": 57.7,") << 400 << QByteArray("malformed_json");
    QTest::newRow("JSON array, not object") << car << QByteArray("[57.7, 11.9]") << 400 << QByteArray("malformed_json");
    QTest::newRow("missing lat") << car << QByteArray("{\"lng\": 11.97}") << 400 << QByteArray("missing_field");
    QTest::newRow("missing lng") << car << QByteArray("{\"lat\": 57.7}") << 400 << QByteArray("missing_field");
    QTest::newRow("lat is a string") << car << QByteArray("{\"lat\": \"57.7\", \"lng\": 11.97}") << 400
                                     << QByteArray("not_a_number");
    QTest::newRow("lng is a bool") << car << QByteArray("{\"lat\": 57.7, \"lng\": true}") << 400
                                   << QByteArray("not_a_number");
    QTest::newRow("lat out of range") << car << QByteArray("{\"lat\": 91, \"lng\": 11.97}") << 400
                                      << QByteArray("out_of_range");
    QTest::newRow("lng out of range") << car << QByteArray("{\"lat\": 57.7, \"lng\": -181}") << 400
                                      << QByteArray("out_of_range");
    QTest::newRow("outside the service area")
        << car << QByteArray("{\"lat\": 59.33, \"lng\": 18.07}") << 400 << QByteArray("outside_service_area");
    QTest::newRow("heading out of range")
        << car << QByteArray("{\"lat\": 57.7, \"lng\": 11.97, \"heading\": 400}") << 400 << QByteArray("out_of_range");
    QTest::newRow("empty body") << car << QByteArray() << 400 << QByteArray("missing_body");
    QTest::newRow("car id abc") << QByteArray("/api/v1/cars/abc/position")
                                << QByteArray("{\"lat\": 57.7, \"lng\": 11.97}") << 400 << QByteArray("invalid_id");
    QTest::newRow("car id 0") << QByteArray("/api/v1/cars/0/position") << QByteArray("{\"lat\": 57.7, \"lng\": 11.97}")
                              << 400 << QByteArray("invalid_id");
    QTest::newRow("car id -1") << QByteArray("/api/v1/cars/-1/position")
                               << QByteArray("{\"lat\": 57.7, \"lng\": 11.97}") << 400 << QByteArray("invalid_id");
}

void ApiEndpointsTest::putPositionRejectsBadInput()
{
    QFETCH(QByteArray, path);
    QFETCH(QByteArray, body);
    QFETCH(int, status);
    QFETCH(QByteArray, code);
    TC_VERIFY_ERROR(m_http->request("PUT", path, body), status, code.constData());
}

void ApiEndpointsTest::putPositionForUnknownCarIs404()
{
    const QJsonObject at{{"lat", 57.70}, {"lng", 11.97}};
    TC_VERIFY_ERROR(m_http->putJson("/api/v1/cars/" + QByteArray::number(kCars + 1) + "/position", at), 404,
                    "car_not_found");
    TC_VERIFY_ERROR(m_http->putJson("/api/v1/cars/99999999/position", at), 404, "car_not_found");
    // The last real car is not unknown.
    TC_VERIFY_STATUS(m_http->putJson("/api/v1/cars/" + QByteArray::number(kCars) + "/position", at), 200);
}

void ApiEndpointsTest::nearbyIsSortedByDistanceWithAllFields()
{
    const HttpResponse r = m_http->get(nearbyPath(50'000, 1000));
    TC_VERIFY_STATUS(r, 200);
    const QJsonArray cars = r.json().value("cars").toArray();
    QCOMPARE(cars.size(), kCars); // the whole fleet is inside 50 km of the centre
    double previous = -1;
    QSet<int> ids;
    for (const QJsonValue &v : cars) {
        const QJsonObject car = v.toObject();
        for (const char *field : {"id", "lat", "lng", "state", "distance_m"})
            QVERIFY2(car.contains(QLatin1StringView(field)), (QByteArray("missing ") + field).constData());
        QVERIFY(car.value("id").isDouble() && car.value("lat").isDouble() && car.value("lng").isDouble());
        QVERIFY(car.value("state").isString());
        const double d = car.value("distance_m").toDouble();
        QVERIFY2(d >= previous, qPrintable(QStringLiteral("%1 after %2").arg(d).arg(previous)));
        previous = d;
        // distance_m is the distance of the car it describes.
        const double expected =
            haversineM(kCentreLat, kCentreLng, car.value("lat").toDouble(), car.value("lng").toDouble());
        QVERIFY2(std::abs(d - expected) < 1.0,
                 qPrintable(QStringLiteral("distance_m %1, computed %2").arg(d).arg(expected)));
        ids.insert(car.value("id").toInt());
    }
    QCOMPARE(ids.size(), kCars);
}

void ApiEndpointsTest::nearbyHonoursLimit()
{
    const HttpResponse all = m_http->get(nearbyPath(50'000, 1000));
    TC_VERIFY_STATUS(all, 200);
    const QJsonArray allCars = all.json().value("cars").toArray();
    QVERIFY(allCars.size() > 5);
    const HttpResponse five = m_http->get(nearbyPath(50'000, 5));
    TC_VERIFY_STATUS(five, 200);
    const QJsonArray cars = five.json().value("cars").toArray();
    QCOMPARE(cars.size(), 5);
    // The five are the nearest: none of them is farther than the sixth nearest of the whole list.
    const double sixth = allCars[5].toObject().value("distance_m").toDouble();
    for (const QJsonValue &v : cars)
        QVERIFY(v.toObject().value("distance_m").toDouble() <= sixth + 50); // cars move a little between calls

    const HttpResponse defaulted = m_http->get("/api/v1/cars/nearby?lat=57.7089&lng=11.9746&radius_m=50000");
    TC_VERIFY_STATUS(defaulted, 200);
    QCOMPARE(defaulted.json().value("cars").toArray().size(), 20); // the documented default limit
}

void ApiEndpointsTest::nearbyHonoursRadius()
{
    // Park two cars at known distances: ~100 m and ~3 km north of the centre.
    const double perMetre = 1.0 / 111'195.0;
    TC_VERIFY_STATUS(
        m_http->putJson("/api/v1/cars/11/position", {{"lat", kCentreLat + 100 * perMetre}, {"lng", kCentreLng}}), 200);
    TC_VERIFY_STATUS(
        m_http->putJson("/api/v1/cars/12/position", {{"lat", kCentreLat + 3000 * perMetre}, {"lng", kCentreLng}}), 200);
    for (const double radius : {150.0, 1000.0, 2500.0}) {
        const HttpResponse r = m_http->get(nearbyPath(radius, 1000));
        TC_VERIFY_STATUS(r, 200);
        QSet<int> ids;
        for (const QJsonValue &v : r.json().value("cars").toArray()) {
            QVERIFY2(v.toObject().value("distance_m").toDouble() <= radius,
                     qPrintable(QStringLiteral("a car at %1 m within radius %2")
                                    .arg(v.toObject().value("distance_m").toDouble())
                                    .arg(radius)));
            ids.insert(v.toObject().value("id").toInt());
        }
        QVERIFY2(ids.contains(11), qPrintable(QStringLiteral("car 11 (100 m) missing at radius %1").arg(radius)));
        QVERIFY2(!ids.contains(12), qPrintable(QStringLiteral("car 12 (3 km) present at radius %1").arg(radius)));
    }
    const HttpResponse wide = m_http->get(nearbyPath(3100, 1000));
    bool found = false;
    for (const QJsonValue &v : wide.json().value("cars").toArray())
        found |= v.toObject().value("id").toInt() == 12;
    QVERIFY2(found, "car 12 (3 km) missing at radius 3100 m");
}

void ApiEndpointsTest::nearbyRejectsBadQuery_data()
{
    QTest::addColumn<QByteArray>("query");
    QTest::addColumn<QByteArray>("code");
    QTest::newRow("missing lat") << QByteArray("lng=11.97") << QByteArray("missing_parameter");
    QTest::newRow("missing lng") << QByteArray("lat=57.7") << QByteArray("missing_parameter");
    QTest::newRow("no query") << QByteArray() << QByteArray("missing_parameter");
    QTest::newRow("lat not a number") << QByteArray("lat=north&lng=11.97") << QByteArray("not_a_number");
    QTest::newRow("lat out of range") << QByteArray("lat=95&lng=11.97") << QByteArray("out_of_range");
    QTest::newRow("outside the area") << QByteArray("lat=40.0&lng=-3.7") << QByteArray("outside_service_area");
    QTest::newRow("limit 0") << QByteArray("lat=57.7&lng=11.97&limit=0") << QByteArray("out_of_range");
    QTest::newRow("radius negative") << QByteArray("lat=57.7&lng=11.97&radius_m=-5") << QByteArray("out_of_range");
    QTest::newRow("radius not a number") << QByteArray("lat=57.7&lng=11.97&radius_m=far") << QByteArray("not_a_number");
}

void ApiEndpointsTest::nearbyRejectsBadQuery()
{
    QFETCH(QByteArray, query);
    QFETCH(QByteArray, code);
    TC_VERIFY_ERROR(m_http->get("/api/v1/cars/nearby?" + query), 400, code.constData());
}

void ApiEndpointsTest::quoteHasDistanceDurationAndFareBreakdown()
{
    const double fromLat = 57.7089, fromLng = 11.9746, toLat = 57.6900, toLng = 11.9800;
    const HttpResponse r = m_http->get("/api/v1/quote?from_lat=57.7089&from_lng=11.9746&to_lat=57.69&to_lng=11.98");
    TC_VERIFY_STATUS(r, 200);
    const QJsonObject q = r.json();
    const double distance = q.value("distance_m").toDouble(-1);
    const double duration = q.value("duration_s").toDouble(-1);
    // Straight line until the road network lands; a road route is never shorter.
    const double crow = haversineM(fromLat, fromLng, toLat, toLng);
    QVERIFY2(distance >= crow - 1 && distance < crow * 3, r.body.constData());
    QVERIFY2(duration > 0, r.body.constData());
    const QJsonObject fare = q.value("fare").toObject();
    for (const char *field : {"base", "per_km", "per_minute", "minimum", "total", "currency"})
        QVERIFY2(fare.contains(QLatin1StringView(field)),
                 (QByteArray("fare lacks ") + field + ": " + r.body).constData());
    QVERIFY(!fare.value("currency").toString().isEmpty());
    const double base = fare.value("base").toDouble(), perKm = fare.value("per_km").toDouble();
    const double perMin = fare.value("per_minute").toDouble(), minimum = fare.value("minimum").toDouble();
    QVERIFY(base >= 0 && perKm > 0 && perMin >= 0 && minimum >= 0);
    const double expected = std::max(minimum, base + perKm * distance / 1000.0 + perMin * duration / 60.0);
    // distance_m and duration_s are rounded to whole units in the answer.
    const double tolerance = 0.02 + perKm * 0.5 / 1000.0 + perMin * 0.5 / 60.0;
    QVERIFY2(std::abs(fare.value("total").toDouble() - expected) <= tolerance,
             qPrintable(QStringLiteral("total %1, expected %2: %3")
                            .arg(fare.value("total").toDouble())
                            .arg(expected)
                            .arg(QString::fromUtf8(r.body))));

    // A long trip is above the minimum, a very short one is charged the minimum.
    const HttpResponse shortTrip =
        m_http->get("/api/v1/quote?from_lat=57.7089&from_lng=11.9746&to_lat=57.7090&to_lng=11.9746");
    TC_VERIFY_STATUS(shortTrip, 200);
    const QJsonObject shortFare = shortTrip.json().value("fare").toObject();
    QCOMPARE(shortFare.value("total").toDouble(), shortFare.value("minimum").toDouble());
    const HttpResponse longTrip = m_http->get("/api/v1/quote?from_lat=57.65&from_lng=11.87&to_lat=57.75&to_lng=12.08");
    TC_VERIFY_STATUS(longTrip, 200);
    const QJsonObject longFare = longTrip.json().value("fare").toObject();
    QVERIFY2(longFare.value("total").toDouble() > longFare.value("minimum").toDouble(), longTrip.body.constData());
}

void ApiEndpointsTest::quoteRejectsMissingPoint()
{
    TC_VERIFY_ERROR(m_http->get("/api/v1/quote?from_lat=57.7&from_lng=11.97&to_lat=57.69"), 400, "missing_parameter");
    TC_VERIFY_ERROR(m_http->get("/api/v1/quote?from_lat=57.7&from_lng=11.97&to_lat=x&to_lng=11.9"), 400,
                    "not_a_number");
    TC_VERIFY_ERROR(m_http->get("/api/v1/quote?from_lat=57.7&from_lng=11.97&to_lat=48.85&to_lng=2.35"), 400,
                    "outside_service_area");
}

void ApiEndpointsTest::helloIsPlainTextHelloWorld()
{
    const HttpResponse r = m_http->get("/hello");
    TC_VERIFY_STATUS(r, 200);
    QVERIFY2(r.header("Content-Type").startsWith("text/plain"), r.header("Content-Type").constData());
    QCOMPARE(r.body, QByteArray("Hello World\n"));
    QCOMPARE(r.header("Content-Length"), QByteArray("12"));
}

void ApiEndpointsTest::fibComputesFibonacci_data()
{
    QTest::addColumn<QByteArray>("query");
    QTest::addColumn<qint64>("expected");
    QTest::newRow("n=0") << QByteArray("n=0") << qint64(0);
    QTest::newRow("n=1") << QByteArray("n=1") << qint64(1);
    QTest::newRow("n=2") << QByteArray("n=2") << qint64(1);
    QTest::newRow("n=25") << QByteArray("n=25") << qint64(75025);
    QTest::newRow("num=10") << QByteArray("num=10") << qint64(55);
    QTest::newRow("num=20") << QByteArray("num=20") << qint64(6765);
}

void ApiEndpointsTest::fibComputesFibonacci()
{
    QFETCH(QByteArray, query);
    QFETCH(qint64, expected);
    const HttpResponse r = m_http->get("/fib?" + query);
    TC_VERIFY_STATUS(r, 200);
    // The number itself, whatever the surrounding shape of the answer.
    QRegularExpression number(QStringLiteral("\\b%1\\b").arg(expected));
    QVERIFY2(number.match(QString::fromUtf8(r.body)).hasMatch(), r.body.constData());
    if (r.isJsonObject())
        QCOMPARE(qint64(r.json().value("fib").toDouble(-1)), expected);
}

void ApiEndpointsTest::fibRejectsOutOfRangeAndNonNumbers_data()
{
    QTest::addColumn<QByteArray>("query");
    QTest::newRow("n=46") << QByteArray("n=46");
    QTest::newRow("n=-1") << QByteArray("n=-1");
    QTest::newRow("n=abc") << QByteArray("n=abc");
    QTest::newRow("n=2.5") << QByteArray("n=2.5");
    QTest::newRow("n empty") << QByteArray("n=");
    QTest::newRow("no n") << QByteArray();
    QTest::newRow("num=1000") << QByteArray("num=1000");
}

void ApiEndpointsTest::fibRejectsOutOfRangeAndNonNumbers()
{
    QFETCH(QByteArray, query);
    TC_VERIFY_ERROR(m_http->get("/fib?" + query), 400, "");
}

void ApiEndpointsTest::cpuAnswers200()
{
    const HttpResponse r = m_http->get("/cpu");
    TC_VERIFY_STATUS(r, 200);
    QVERIFY(!r.body.isEmpty());
}

void ApiEndpointsTest::healthzReportsVersionModeUptime()
{
    const HttpResponse first = m_http->get("/healthz");
    TC_VERIFY_STATUS(first, 200);
    const QJsonObject h = first.json();
    QCOMPARE(h.value("version").toString(), QStringLiteral(TAXICORE_VERSION));
    QCOMPARE(h.value("mode").toString(), QStringLiteral("single"));
    QVERIFY2(h.value("uptime_s").isDouble() && h.value("uptime_s").toDouble() >= 0, first.body.constData());
    QTest::qWait(1100); // inherent: uptime_s counts seconds, so more than one must pass
    const HttpResponse second = m_http->get("/healthz");
    TC_VERIFY_STATUS(second, 200);
    QVERIFY2(second.json().value("uptime_s").toDouble() >= h.value("uptime_s").toDouble() + 1.0,
             second.body.constData());
}

namespace {

// The value of `taxicore_http_requests_total{route="...",status="..."}`, or 0 when absent.
double requestsCounter(const QByteArray &metrics, const QByteArray &route, int status)
{
    const QRegularExpression line(QStringLiteral("^\\w*requests_total\\{([^}]*)\\}\\s+([0-9.e+]+)\\s*$"),
                                  QRegularExpression::MultilineOption);
    double total = 0;
    auto it = line.globalMatch(QString::fromUtf8(metrics));
    while (it.hasNext()) {
        const auto m = it.next();
        const QString labels = m.captured(1);
        if (labels.contains(QStringLiteral("route=\"%1\"").arg(QString::fromUtf8(route)))
            && labels.contains(QStringLiteral("status=\"%1\"").arg(status)))
            total += m.captured(2).toDouble();
    }
    return total;
}

} // namespace

void ApiEndpointsTest::metricsCountsRequestsByRouteAndStatus()
{
    const HttpResponse before = m_http->get("/metrics");
    TC_VERIFY_STATUS(before, 200);
    QVERIFY2(before.header("Content-Type").startsWith("text/plain"), before.header("Content-Type").constData());
    const double helloBefore = requestsCounter(before.body, "GET /hello", 200);
    constexpr int kHellos = 25;
    for (int i = 0; i < kHellos; ++i)
        TC_VERIFY_STATUS(m_http->get("/hello"), 200);
    TC_VERIFY_ERROR(m_http->get("/fib?n=-1"), 400, "");
    const HttpResponse after = m_http->get("/metrics");
    TC_VERIFY_STATUS(after, 200);
    const double helloAfter = requestsCounter(after.body, "GET /hello", 200);
    QVERIFY2(helloAfter >= helloBefore + kHellos,
             qPrintable(QStringLiteral("GET /hello 200: %1 before, %2 after %3 requests")
                            .arg(helloBefore)
                            .arg(helloAfter)
                            .arg(kHellos)));
    QVERIFY2(requestsCounter(after.body, "GET /fib", 400) >= 1, after.body.left(2000).constData());
    // Prometheus text: TYPE lines, a latency histogram with buckets, _sum and _count.
    QVERIFY(after.body.contains("# TYPE "));
    const QRegularExpression count(QStringLiteral("^\\w+_count\\s+(\\d+)\\s*$"), QRegularExpression::MultilineOption);
    const auto m = count.match(QString::fromUtf8(after.body));
    QVERIFY2(m.hasMatch(), "no histogram _count");
    QVERIFY(m.captured(1).toLongLong() >= kHellos);
    QVERIFY(after.body.contains("_bucket{le=\"+Inf\"}"));
    QVERIFY(after.body.contains("_sum "));
    QVERIFY(after.body.contains("open_connections"));
    QVERIFY(after.body.contains("mode=\"single\""));
}

void ApiEndpointsTest::wrongMethodIs405WithAllowAndJson()
{
    const HttpResponse r = m_http->request("DELETE", "/hello");
    TC_VERIFY_ERROR(r, 405, "method_not_allowed");
    QVERIFY2(r.header("Allow").contains("GET"), r.header("Allow").constData());
    const HttpResponse p = m_http->request("POST", "/api/v1/cars/3/position", "{\"lat\":57.7,\"lng\":11.97}");
    TC_VERIFY_ERROR(p, 405, "method_not_allowed");
    QVERIFY2(p.header("Allow").contains("PUT"), p.header("Allow").constData());
    const HttpResponse g = m_http->get("/api/v1/bookings");
    TC_VERIFY_ERROR(g, 405, "method_not_allowed");
    QVERIFY2(g.header("Allow").contains("POST"), g.header("Allow").constData());
    // A method the server does not know is refused the same way, and not given a made-up name.
    const HttpResponse t = m_http->request("TRACE", "/hello");
    TC_VERIFY_ERROR(t, 405, "method_not_allowed");
    QVERIFY2(!t.body.contains("OTHER") && t.body.contains("method is not allowed on /hello"), t.body.constData());
}

void ApiEndpointsTest::unknownPathIs404Json()
{
    TC_VERIFY_ERROR(m_http->get("/nope"), 404, "not_found");
    TC_VERIFY_ERROR(m_http->get("/api/v1/cars/3/position/extra"), 404, "not_found");
    TC_VERIFY_ERROR(m_http->get("/api/v2/quote"), 404, "not_found");
    // The connection survives error answers.
    TC_VERIFY_STATUS(m_http->get("/hello"), 200);
    QCOMPARE(m_http->connections(), 1);
}

QTEST_GUILESS_MAIN(ApiEndpointsTest)
#include "server_api_endpoints_test.moc"
