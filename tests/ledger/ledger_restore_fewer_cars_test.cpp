// A restart with fewer cars than the open bookings of the ledger need (an operator shrinking the
// fleet): the bookings whose cars are still there resume; the others cannot be served, so they end
// as expired, in the ledger too, and the server says how many. On the old code they were skipped
// silently: the ledger kept them "assigned" for good, their riders were told so, and a cancel
// answered 404 booking_not_found for a booking the rider could still read.

#include "ApiAssert.h"
#include "HttpClient.h"
#include "RiderToken.h"
#include "ServerProcess.h"

#include <QJsonArray>
#include <algorithm>
#include <QTemporaryDir>
#include <QTest>
#include <vector>

using namespace taxicore::test;

namespace {

constexpr int kCarsBefore = 40;
constexpr int kCarsAfter = 10;
constexpr int kBookings = 30; // most of them on cars above kCarsAfter

struct Booked {
    qint64 id = 0;
    QByteArray token;
    int carId = 0;
};

QStringList serverArgs(const QString &dataDir, int cars)
{
    // A pickup timeout of 10 simulated hours: nothing expires by itself during the test.
    return {QStringLiteral("--data-dir"),       dataDir,
            QStringLiteral("--cars"),           QString::number(cars),
            QStringLiteral("--pickup-timeout"), QStringLiteral("36000")};
}

} // namespace

class RestoreFewerCarsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void bookingsWhoseCarsAreGoneEndAsExpired();
};

void RestoreFewerCarsTest::bookingsWhoseCarsAreGoneEndAsExpired()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    std::vector<Booked> booked;
    {
        ServerProcess first(serverArgs(dir.path(), kCarsBefore));
        QVERIFY2(first.start(20'000), qPrintable(first.error()));
        HttpClient http(first.host(), first.port());
        for (int i = 0; i < kBookings; ++i) {
            const HttpResponse r = http.postJson(
                "/api/v1/bookings",
                {{"rider_id", QStringLiteral("shrink-%1").arg(i)},
                 {"pickup", QJsonObject{{"lat", 57.70 + 0.001 * (i % 6)}, {"lng", 11.96 + 0.002 * (i / 6)}}}});
            TC_VERIFY_STATUS(r, 201);
            booked.push_back({qint64(r.json().value("booking_id").toDouble()), riderToken(r.json()),
                              r.json().value("car_id").toInt()});
        }
        QCOMPARE(first.stop(), 0);
    }
    const auto gone = std::count_if(booked.begin(), booked.end(), [](const Booked &b) { return b.carId > kCarsAfter; });
    QVERIFY2(gone > 0 && gone < kBookings, "the bookings must sit on cars on both sides of the new --cars");

    ServerProcess second(serverArgs(dir.path(), kCarsAfter));
    QVERIFY2(second.start(20'000), qPrintable(second.error()));
    HttpClient http(second.host(), second.port());
    for (const Booked &b : booked) {
        const HttpResponse r = readBooking(http, b.id, b.token);
        TC_VERIFY_STATUS(r, 200);
        const QString state = r.json().value("state").toString();
        if (b.carId <= kCarsAfter) {
            QVERIFY2(state == QLatin1String("assigned") || state == QLatin1String("arriving"), r.body.constData());
            continue;
        }
        QVERIFY2(state == QLatin1String("expired"), r.body.constData());
        // The rider's cancel agrees with what the rider reads: an ended booking, not an unknown one.
        TC_VERIFY_ERROR(moveBooking(http, b.id, "cancel", b.token), 409, "illegal_transition");
    }
    // Said once, with the count, in the log and the event log.
    const QString said = QStringLiteral("%1 open bookings could not be restored").arg(gone);
    QVERIFY2(second.stderrText().contains(said.toUtf8()), second.stderrText().constData());
    const HttpResponse events = http.get("/admin/v1/events");
    TC_VERIFY_STATUS(events, 200);
    QVERIFY2(events.body.contains(said.toUtf8()), events.body.constData());
    QCOMPARE(second.stop(), 0);

    // And for good: the next start finds nothing more to end.
    ServerProcess third(serverArgs(dir.path(), kCarsAfter));
    QVERIFY2(third.start(20'000), qPrintable(third.error()));
    QVERIFY2(!third.stderrText().contains("could not be restored"), third.stderrText().constData());
    QCOMPARE(third.stop(), 0);
}

QTEST_GUILESS_MAIN(RestoreFewerCarsTest)
#include "ledger_restore_fewer_cars_test.moc"
