// Completed trips reach the ledger and its reports (issue 8): three trips driven through the API,
// then GET /api/v1/trips lists them with the receipts' fares (at most `limit`, saying when there are
// more) and /admin/v1/report sums them, in JSON and in CSV; after a graceful restart and after a kill -9 the trips are
// still there.

#include "ApiAssert.h"
#include "HttpClient.h"
#include "RiderToken.h"
#include "ServerProcess.h"

#include <QJsonArray>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <csignal>
#include <map>
#include <sys/types.h>

using namespace taxicore::test;

namespace {

constexpr double kMetreLat = 1.0 / 111'195.0;

QJsonObject point(double lat, double lng)
{
    return {{"lat", lat}, {"lng", lng}};
}

} // namespace

class ServerTripsReportTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void reportsSumTheCompletedTrips();

private:
    // Books, drives and completes one trip; the receipt's fare total goes to `fares`.
    void completeTrip(HttpClient &http, int n, double lat, double lng, std::map<qint64, double> &fares);
    void checkTrips(HttpClient &http, const std::map<qint64, double> &fares);
};

void ServerTripsReportTest::completeTrip(HttpClient &http, int n, double lat, double lng,
                                         std::map<qint64, double> &fares)
{
    const HttpResponse booked = http.postJson("/api/v1/bookings", {{"rider_id", QStringLiteral("report-%1").arg(n)},
                                                                   {"pickup", point(lat, lng)},
                                                                   {"dropoff", point(lat + 1000 * kMetreLat, lng)}});
    TC_VERIFY_STATUS(booked, 201);
    const qint64 id = qint64(booked.json().value("booking_id").toDouble());
    const QByteArray carPath =
        "/api/v1/cars/" + QByteArray::number(booked.json().value("car_id").toInt()) + "/position";
    TC_VERIFY_STATUS(http.putJson(carPath, point(lat, lng)), 200);
    const HttpResponse current = readBooking(http, id, riderToken(booked.json()));
    TC_VERIFY_STATUS(current, 200);
    QCOMPARE(current.json().value("state").toString(), QStringLiteral("arriving"));
    TC_VERIFY_STATUS(moveBooking(http, id, "pickup", riderToken(booked.json())), 200);
    TC_VERIFY_STATUS(http.putJson(carPath, point(lat + 500 * kMetreLat, lng)), 200);
    TC_VERIFY_STATUS(http.putJson(carPath, point(lat + 1000 * kMetreLat, lng)), 200);
    const HttpResponse done = moveBooking(http, id, "complete", riderToken(booked.json()));
    TC_VERIFY_STATUS(done, 200);
    QCOMPARE(done.json().value("state").toString(), QStringLiteral("completed"));
    const double fare = done.json().value("fare").toObject().value("total").toDouble(-1);
    QVERIFY2(fare > 0, done.body.constData());
    fares[id] = fare;
}

void ServerTripsReportTest::checkTrips(HttpClient &http, const std::map<qint64, double> &fares)
{
    const HttpResponse trips = http.get("/api/v1/trips");
    TC_VERIFY_STATUS(trips, 200);
    const QJsonArray list = trips.json().value("trips").toArray();
    QCOMPARE(list.size(), qsizetype(fares.size()));
    for (const QJsonValue &v : list) {
        const QJsonObject t = v.toObject();
        const qint64 id = qint64(t.value("booking_id").toDouble());
        const auto it = fares.find(id);
        QVERIFY2(it != fares.end(), trips.body.constData());
        QVERIFY2(std::abs(t.value("fare").toDouble() - it->second) <= 0.005, trips.body.constData());
        QVERIFY2(std::abs(t.value("distance_m").toDouble() - 1000) <= 5, trips.body.constData());
        QVERIFY2(t.value("ended_ms").toInteger() >= t.value("started_ms").toInteger(), trips.body.constData());
    }
    QCOMPARE(trips.json().value("truncated").toBool(true), false);
    // At most `limit` of them, the first by their end, and a word that there are more.
    const HttpResponse firstTwo = http.get("/api/v1/trips?limit=2");
    TC_VERIFY_STATUS(firstTwo, 200);
    const QJsonArray two = firstTwo.json().value("trips").toArray();
    QCOMPARE(two.size(), 2);
    QCOMPARE(two.at(0).toObject().value("booking_id"), list.at(0).toObject().value("booking_id"));
    QCOMPARE(two.at(1).toObject().value("booking_id"), list.at(1).toObject().value("booking_id"));
    QCOMPARE(firstTwo.json().value("truncated").toBool(false), true);
    const HttpResponse allThree = http.get("/api/v1/trips?limit=3");
    QCOMPARE(allThree.json().value("trips").toArray().size(), 3);
    QCOMPARE(allThree.json().value("truncated").toBool(true), false);
    TC_VERIFY_ERROR(http.get("/api/v1/trips?limit=0"), 400, "out_of_range");
    TC_VERIFY_ERROR(http.get("/api/v1/trips?limit=10001"), 400, "out_of_range");
    // A window that ended before the trips holds none of them.
    const HttpResponse old = http.get("/api/v1/trips?from=0&to=1000");
    TC_VERIFY_STATUS(old, 200);
    QCOMPARE(old.json().value("trips").toArray().size(), 0);

    double revenue = 0;
    for (const auto &entry : fares)
        revenue += entry.second;
    const HttpResponse report = http.get("/admin/v1/report");
    TC_VERIFY_STATUS(report, 200);
    const QJsonObject r = report.json();
    QCOMPARE(r.value("trips").toInt(), 3);
    QVERIFY2(std::abs(r.value("revenue").toDouble() - revenue) <= 0.01, report.body.constData());
    QVERIFY2(std::abs(r.value("average_fare").toDouble() - r.value("revenue").toDouble() / 3) <= 0.01,
             report.body.constData());
    int byHour = 0;
    double byHourRevenue = 0;
    for (const QJsonValue &v : r.value("by_hour").toArray()) {
        byHour += v.toObject().value("trips").toInt();
        byHourRevenue += v.toObject().value("revenue").toDouble();
    }
    QCOMPARE(byHour, 3);
    QVERIFY2(std::abs(byHourRevenue - revenue) <= 0.01, report.body.constData());

    const HttpResponse csv = http.get("/admin/v1/report?format=csv");
    TC_VERIFY_STATUS(csv, 200);
    QVERIFY2(csv.header("Content-Type").startsWith("text/csv"), csv.header("Content-Type").constData());
    QByteArray total;
    for (const QByteArray &line : csv.body.split('\n')) {
        if (line.startsWith("total,"))
            total = line;
    }
    QVERIFY2(!total.isEmpty(), csv.body.constData());
    const QList<QByteArray> cells = total.trimmed().split(',');
    QVERIFY2(cells.size() >= 3, total.constData());
    QCOMPARE(cells[1].toInt(), 3);
    QVERIFY2(std::abs(cells[2].toDouble() - revenue) <= 0.01, total.constData());
}

void ServerTripsReportTest::reportsSumTheCompletedTrips()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QStringList args{QStringLiteral("--data-dir"), dir.filePath(QStringLiteral("data")), QStringLiteral("--cars"),
                           QStringLiteral("20"),         QStringLiteral("--sim-speed"),        QStringLiteral("0.001")};
    std::map<qint64, double> fares;
    {
        ServerProcess server(args);
        QVERIFY2(server.start(), qPrintable(server.error()));
        HttpClient http(server.host(), server.port());
        const double pickups[3][2] = {{57.7000, 11.9500}, {57.7100, 11.9800}, {57.6950, 11.9700}};
        for (int i = 0; i < 3; ++i) {
            completeTrip(http, i, pickups[i][0], pickups[i][1], fares);
            if (QTest::currentTestFailed())
                return;
        }
        QCOMPARE(fares.size(), std::size_t(3));
        checkTrips(http, fares);
        if (QTest::currentTestFailed())
            return;
        QCOMPARE(server.stop(), 0);
    }
    // Completed trips remain after a graceful restart...
    {
        ServerProcess again(args);
        QVERIFY2(again.start(), qPrintable(again.error()));
        HttpClient http(again.host(), again.port());
        checkTrips(http, fares);
        if (QTest::currentTestFailed())
            return;
        // ...and after a kill -9.
        QVERIFY(::kill(pid_t(again.pid()), SIGKILL) == 0);
        QVERIFY(again.waitForExit(5000));
    }
    ServerProcess afterCrash(args);
    QVERIFY2(afterCrash.start(), qPrintable(afterCrash.error()));
    HttpClient http(afterCrash.host(), afterCrash.port());
    checkTrips(http, fares);
    if (QTest::currentTestFailed())
        return;
    QCOMPARE(afterCrash.stop(), 0);
}

QTEST_MAIN(ServerTripsReportTest)
#include "ledger_server_trips_report_test.moc"
