// The demand generator (issue 4): with a rate and a seed it books rides at road points through the
// same path as riders, boards its riders after their car arrived and completes the trips at the
// drop-off; everything lands in the ledger, the cars' arrivals included. The same seed books the
// same rides; the rate can be changed at runtime (PUT /admin/v1/demand).

#include "LedgerValue.h"
#include "ApiAssert.h"
#include "HttpClient.h"
#include "ServerProcess.h"
#include "Wait.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

using namespace taxicore::test;

namespace {

constexpr int kTripsTimeoutMs = 40'000;
constexpr int kBookingsTimeoutMs = 15'000;

QStringList serverArgs(const QTemporaryDir &dir, const QString &rate, const QString &seed)
{
    return {QStringLiteral("--cars"),        QStringLiteral("120"),
            QStringLiteral("--sim-speed"),   QStringLiteral("40"),
            QStringLiteral("--seed"),        seed,
            QStringLiteral("--demand-rate"), rate,
            QStringLiteral("--data-dir"),    dir.path()};
}

using taxicore::test::ledgerValue;

// The pickups of the first `count` bookings, in order, as text.
QString firstPickups(const QTemporaryDir &dir, int count)
{
    return ledgerValue(dir, QStringLiteral("SELECT group_concat(p, ';') FROM (SELECT printf('%.6f,%.6f', pickup_lat, "
                                           "pickup_lng) AS p FROM bookings ORDER BY id LIMIT %1)")
                                .arg(count))
        .toString();
}

} // namespace

class DemandGeneratorTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void generatedRidesCompleteAndAreRecorded();
    void sameSeedBooksTheSameRides();
};

void DemandGeneratorTest::generatedRidesCompleteAndAreRecorded()
{
    QTemporaryDir dir;
    ServerProcess server(serverArgs(dir, QStringLiteral("0"), QStringLiteral("5")));
    QVERIFY2(server.start(20'000), qPrintable(server.error()));
    HttpClient http(server.host(), server.port());
    const HttpResponse off = http.get("/admin/v1/demand");
    TC_VERIFY_STATUS(off, 200);
    QCOMPARE(off.json().value("rides_per_minute").toDouble(), 0.0);
    TC_VERIFY_ERROR(http.putJson("/admin/v1/demand", {{"rides_per_minute", -1}}), 400, "");

    const HttpResponse on = http.putJson("/admin/v1/demand", {{"rides_per_minute", 240}});
    TC_VERIFY_STATUS(on, 200);
    QCOMPARE(on.json().value("rides_per_minute").toDouble(), 240.0);

    // Trips complete by themselves: the generator's riders get in and out.
    QElapsedTimer timer;
    timer.start();
    QJsonArray trips;
    HttpResponse r;
    waitUntil(
        [&] {
            r = http.get("/api/v1/trips");
            trips = r.json().value("trips").toArray();
            return r.status != 200 || trips.size() >= 3;
        },
        kTripsTimeoutMs, 250);
    TC_VERIFY_STATUS(r, 200);
    QVERIFY2(trips.size() >= 3,
             qPrintable(QStringLiteral("%1 trips after %2 ms").arg(trips.size()).arg(timer.elapsed())));
    for (const QJsonValue &t : trips)
        QVERIFY2(t.toObject().value("rider_id").toString().startsWith(QStringLiteral("demand-")),
                 QJsonDocument(t.toObject()).toJson().constData());

    TC_VERIFY_STATUS(http.putJson("/admin/v1/demand", {{"rides_per_minute", 0}}), 200);
    QCOMPARE(server.stop(), 0);

    // Every completed trip was booked, reached (arriving) and boarded (on_trip) in the ledger.
    const qint64 completed = ledgerValue(dir, QStringLiteral("SELECT count(*) FROM trips")).toLongLong();
    QVERIFY(completed >= 3);
    const qint64 withAllMoves =
        ledgerValue(
            dir,
            QStringLiteral(
                "SELECT count(*) FROM trips t WHERE"
                " EXISTS (SELECT 1 FROM transitions x WHERE x.booking_id = t.booking_id AND x.state = 'arriving')"
                " AND EXISTS (SELECT 1 FROM transitions x WHERE x.booking_id = t.booking_id AND x.state = 'on_trip')"))
            .toLongLong();
    QCOMPARE(withAllMoves, completed);
    QVERIFY(ledgerValue(dir, QStringLiteral("SELECT min(fare_total) FROM trips")).toDouble() > 0);
    QVERIFY(ledgerValue(dir, QStringLiteral("SELECT min(fare_surge) FROM trips")).toDouble() >= 1.0);
}

void DemandGeneratorTest::sameSeedBooksTheSameRides()
{
    constexpr int kRides = 5;
    QString pickups[2];
    QTemporaryDir dirs[2];
    for (int run = 0; run < 2; ++run) {
        ServerProcess server(serverArgs(dirs[run], QStringLiteral("600"), QStringLiteral("42")));
        QVERIFY2(server.start(20'000), qPrintable(server.error()));
        waitUntil(
            [&] { return ledgerValue(dirs[run], QStringLiteral("SELECT count(*) FROM bookings")).toInt() >= kRides; },
            kBookingsTimeoutMs, 100);
        QCOMPARE(server.stop(), 0);
        pickups[run] = firstPickups(dirs[run], kRides);
        QCOMPARE(pickups[run].count(u';'), kRides - 1);
    }
    QCOMPARE(pickups[1], pickups[0]);
}

QTEST_GUILESS_MAIN(DemandGeneratorTest)
#include "trip_demand_generator_test.moc"
