// A restored booking resumes where it was (issue 15, item 1): book with a drop-off, kill -9 the
// server while the car drives to the pickup (assigned) or the rider is on board (on_trip), restart
// on the same data directory, and the ride goes on: the car starts from where it was checkpointed
// (not from a random point), drives by road to the pickup and the drop-off, a trip keeps the
// metres it had, and the fare charged on completion is the quote given at booking (the stored
// quote and surge came back). Single-process and processes mode.

#include "ApiAssert.h"
#include "HttpClient.h"
#include "RiderToken.h"
#include "LedgerValue.h"
#include "ServerProcess.h"
#include "Wait.h"

#include <QDateTime>
#include <QFile>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <csignal>
#include <functional>
#include <memory>

using namespace taxicore::test;

namespace {

// 60 cars; a pickup timeout of 10 simulated hours: the restart must not expire the booking. The
// restart has another seed, so a car placed anew would not start where the booking's car was.
const QStringList kServerArgs = {QStringLiteral("--cars"), QStringLiteral("60"), QStringLiteral("--pickup-timeout"),
                                 QStringLiteral("36000")};
// Simulated time after the restart: the nearest car reaches a central pickup in a few seconds.
const QString kRestartSpeed = QStringLiteral("30");
const QJsonObject kPickup{{"lat", 57.7003}, {"lng", 11.9668}};
const QJsonObject kDropoff{{"lat", 57.7078}, {"lng", 11.9880}};
constexpr int kWaitMs = 15'000;
constexpr int kPollMs = 100;
// A checkpoint is written every second of real time; waiting for one allows several.
constexpr int kCheckpointWaitMs = 5'000;
// Where a restarted car may be, at most, from where it was seen before the kill (at 10×: it drove
// on until the kill, and on again from its checkpoint until the first answer after the restart);
// a car placed anew would be anywhere in the city.
constexpr double kResumedWithinM = 600;

double distanceM(const QJsonObject &a, const QJsonObject &b)
{
    constexpr double kMetresPerDegree = 111'195.0;
    const double dy = (a.value("lat").toDouble() - b.value("lat").toDouble()) * kMetresPerDegree;
    const double dx = (a.value("lng").toDouble() - b.value("lng").toDouble()) * kMetresPerDegree
                      * std::cos(a.value("lat").toDouble() * M_PI / 180);
    return std::hypot(dx, dy);
}

// Polls booking `id` as the rider holding `token` until `done(booking)` or kWaitMs; the last
// answer is left in `last`.
bool pollUntil(HttpClient &http, qint64 id, const QByteArray &token, QJsonObject &last,
               const std::function<bool(const QJsonObject &)> &done)
{
    return waitUntil(
        [&] {
            const HttpResponse r = readBooking(http, id, token);
            if (r.status == 200)
                last = r.json();
            return r.status == 200 && done(last);
        },
        kWaitMs, kPollMs);
}

bool inState(const QJsonObject &b, const char *state)
{
    return b.value("state").toString() == QLatin1StringView(state);
}

} // namespace

class BookingRestoreTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void restoredBookingResumes_data();
    void restoredBookingResumes();
};

void BookingRestoreTest::restoredBookingResumes_data()
{
    QTest::addColumn<QStringList>("modeArgs");
    QTest::addColumn<bool>("onTrip");
    QTest::addColumn<QString>("firstSpeed"); // slower while assigned: the kill must land before arrival
    const QStringList processes{QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"),
                                QStringLiteral("2")};
    QTest::newRow("single-assigned") << QStringList{} << false << QStringLiteral("10");
    QTest::newRow("single-on_trip") << QStringList{} << true << QStringLiteral("30");
    QTest::newRow("processes-assigned") << processes << false << QStringLiteral("10");
    QTest::newRow("processes-on_trip") << processes << true << QStringLiteral("30");
}

void BookingRestoreTest::restoredBookingResumes()
{
    QFETCH(QStringList, modeArgs);
    QFETCH(bool, onTrip);
    QFETCH(QString, firstSpeed);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // No minimum fare: a metered fare then differs from the quote (both would often be the minimum).
    QFile tariff(dir.filePath(QStringLiteral("tariff.json")));
    QVERIFY(tariff.open(QIODevice::WriteOnly) && tariff.write(R"({"minimum": 0})") > 0);
    tariff.close();
    const QStringList args =
        kServerArgs + modeArgs
        + QStringList{QStringLiteral("--data-dir"), dir.path(), QStringLiteral("--tariff"), tariff.fileName()};

    auto first = std::make_unique<ServerProcess>(
        args + QStringList{QStringLiteral("--sim-speed"), firstSpeed, QStringLiteral("--seed"), QStringLiteral("5")});
    QVERIFY2(first->start(20'000), qPrintable(first->error()));
    qint64 id = 0;
    QByteArray token;
    double quoteTotal = 0, quoteSurge = 0;
    QJsonObject beforeKill;
    {
        HttpClient http(first->host(), first->port());
        const HttpResponse booked =
            http.postJson("/api/v1/bookings", {{"rider_id", "restore"}, {"pickup", kPickup}, {"dropoff", kDropoff}});
        TC_VERIFY_STATUS(booked, 201);
        id = qint64(booked.json().value("booking_id").toDouble());
        token = riderToken(booked.json());
        quoteTotal = booked.json().value("quote").toObject().value("total").toDouble();
        quoteSurge = booked.json().value("quote").toObject().value("surge").toDouble();
        QVERIFY2(quoteTotal > 0, booked.body.constData());
        if (onTrip) {
            QVERIFY2(
                pollUntil(http, id, token, beforeKill, [](const QJsonObject &b) { return inState(b, "arriving"); }),
                QJsonDocument(beforeKill).toJson().constData());
            TC_VERIFY_STATUS(moveBooking(http, id, "pickup", token), 200);
        }
        // The ride has a checkpoint in the ledger (progress_ms: its wall-clock time), and on a
        // trip the car has driven a little (was a fixed 1.2 s for both).
        const QString checkpointSql =
            QStringLiteral("SELECT ifnull(progress_ms, 0) FROM bookings WHERE id = %1").arg(id);
        QVERIFY2(waitUntil(
                     [&] {
                         return ledgerValue(dir, checkpointSql).toLongLong() > 0
                                && (!onTrip || readBooking(http, id, token).json().value("distance_m").toDouble() > 50);
                     },
                     kCheckpointWaitMs, kPollMs),
                 "no progress checkpoint in the ledger");
        const HttpResponse seen = readBooking(http, id, token);
        const qint64 seenAtMs = QDateTime::currentMSecsSinceEpoch();
        TC_VERIFY_STATUS(seen, 200);
        beforeKill = seen.json();
        QCOMPARE(beforeKill.value("state").toString(), onTrip ? QStringLiteral("on_trip") : QStringLiteral("assigned"));
        if (onTrip)
            QVERIFY2(beforeKill.value("distance_m").toDouble() > 50, seen.body.constData());
        // A checkpoint at least as far along as what was seen (was a fixed 1.2 s).
        QVERIFY2(waitUntil([&] { return ledgerValue(dir, checkpointSql).toLongLong() > seenAtMs; }, kCheckpointWaitMs,
                           kPollMs),
                 "no progress checkpoint after the state seen");
    }
    ::kill(pid_t(first->pid()), SIGKILL);
    QVERIFY(first->waitForExit(5000));
    first.reset();

    ServerProcess second(
        args
        + QStringList{QStringLiteral("--sim-speed"), kRestartSpeed, QStringLiteral("--seed"), QStringLiteral("6")});
    QVERIFY2(second.start(20'000), qPrintable(second.error()));
    HttpClient http(second.host(), second.port());
    const HttpResponse restored = readBooking(http, id, token);
    TC_VERIFY_STATUS(restored, 200);
    // It resumed where it was: the same car, near where it was last seen, the trip's metres kept.
    QCOMPARE(restored.json().value("car_id").toInt(), beforeKill.value("car_id").toInt());
    const double movedM = distanceM(restored.json().value("car").toObject(), beforeKill.value("car").toObject());
    if (!onTrip) // a trip's car drove on fast before the kill: its metres below tell where it resumed
        QVERIFY2(movedM < kResumedWithinM, qPrintable(QStringLiteral("the restored car is %1 m from where it was: %2")
                                                          .arg(movedM)
                                                          .arg(QString::fromUtf8(restored.body))));
    if (onTrip)
        QVERIFY2(restored.json().value("distance_m").toDouble() >= beforeKill.value("distance_m").toDouble() - 1,
                 restored.body.constData());

    // The car drives on: to the pickup, the rider boards, to the drop-off.
    QJsonObject last;
    if (!onTrip) {
        QVERIFY2(pollUntil(http, id, token, last, [](const QJsonObject &b) { return inState(b, "arriving"); }),
                 QJsonDocument(last).toJson().constData());
        TC_VERIFY_STATUS(moveBooking(http, id, "pickup", token), 200);
    }
    QVERIFY2(pollUntil(http, id, token, last,
                       [](const QJsonObject &b) {
                           const QJsonObject car = b.value("car").toObject();
                           return distanceM(car, kDropoff) < 15 && car.value("speed_kmh").toDouble() == 0;
                       }),
             QJsonDocument(last).toJson().constData());
    const HttpResponse done = moveBooking(http, id, "complete", token);
    TC_VERIFY_STATUS(done, 200);
    const QJsonObject fare = done.json().value("fare").toObject();
    QCOMPARE(fare.value("total").toDouble(), quoteTotal);
    QCOMPARE(fare.value("surge").toDouble(), quoteSurge);
    QVERIFY2(second.isRunning(), second.stderrText().constData());
    QCOMPARE(second.stop(), 0);
}

QTEST_MAIN(BookingRestoreTest)
#include "ledger_booking_restore_test.moc"
