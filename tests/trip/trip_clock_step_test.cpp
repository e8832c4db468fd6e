// A step of the host's wall clock (an operator setting the time, NTP correcting a badly set clock,
// a VM resumed) must not change what a booking is judged or charged by: its pickup timeout and its
// time on board are durations, measured on the monotonic clock. On the old code both came from
// wall-clock differences, so a step two hours forward expired every waiting booking at once, and
// one during a trip billed the rider for the hour. A real taxicore-server with its wall clock
// stepped through libfaketime (tests/support/FakeClock.h); the monotonic clock is the host's.

#include "ApiAssert.h"
#include "FakeClock.h"
#include "HttpClient.h"
#include "RequireTool.h"
#include "RiderToken.h"
#include "ServerProcess.h"
#include "Wait.h"

#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>

using namespace taxicore::test;

namespace {

constexpr int kWaitMs = 15'000;
// libfaketime reads the offset file at most once a second; the expiry sweeps every 500 ms.
constexpr int kStepTakesHoldMs = 2500;
constexpr qint64 kStepS = 7200;
const QJsonObject kPickup{{"lat", 57.7003}, {"lng", 11.9668}};
const QJsonObject kDropoff{{"lat", 57.7078}, {"lng", 11.9880}};

qint64 bookingId(const HttpResponse &r)
{
    return qint64(r.json().value("booking_id").toDouble());
}

} // namespace

class ClockStepTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void aStepForwardExpiresNoWaitingBooking();
    void aStepDuringATripIsNotBilled();

private:
    // A server on the bundled city whose wall clock follows m_offsetFile (now "+0").
    std::unique_ptr<ServerProcess> startServer(const QStringList &extra);
    // Steps the server's wall clock kStepS forward and waits until the step has reached it:
    // a booking made then must be stamped (created_ms) at least kStepS ahead of `before`.
    void stepForward(HttpClient &http, qint64 before);

    QTemporaryDir m_dir;
    QString m_offsetFile;
};

void ClockStepTest::initTestCase()
{
    TC_REQUIRE_TOOL(fakeTimeAvailable(), "libfaketime is not installed (package faketime)");
    QVERIFY(m_dir.isValid());
}

void ClockStepTest::init()
{
    m_offsetFile = m_dir.filePath(QStringLiteral("offset-%1").arg(QTest::currentTestFunction()));
    QVERIFY(setWallClockOffset(m_offsetFile, 0));
}

std::unique_ptr<ServerProcess> ClockStepTest::startServer(const QStringList &extra)
{
    auto server = std::make_unique<ServerProcess>(
        QStringList{QStringLiteral("--data-dir"), m_dir.filePath(QTest::currentTestFunction()),
                    QStringLiteral("--seed"), QStringLiteral("5"), QStringLiteral("--demand-rate"), QStringLiteral("0")}
        + extra);
    server->setEnvironment(steppableWallClock(m_offsetFile));
    if (!server->start(20'000))
        qWarning().noquote() << server->error() << server->stderrText();
    return server;
}

void ClockStepTest::stepForward(HttpClient &http, qint64 before)
{
    QVERIFY(setWallClockOffset(m_offsetFile, kStepS));
    QTest::qWait(kStepTakesHoldMs);
    // The witness: a second car booked now carries the stepped clock.
    const HttpResponse witness = http.postJson("/api/v1/bookings", {{"rider_id", "witness"}, {"pickup", kPickup}});
    TC_VERIFY_STATUS(witness, 201);
    const qint64 stamped = qint64(witness.json().value("created_ms").toDouble());
    QVERIFY2(
        stamped - before >= kStepS * 1000,
        qPrintable(
            QStringLiteral("the server's clock did not step: created_ms %1, before it %2").arg(stamped).arg(before)));
}

// Two hours forward, with the default ten-minute pickup timeout: the booking still waits for its
// rider (on the old code it was expired at the next sweep).
void ClockStepTest::aStepForwardExpiresNoWaitingBooking()
{
    auto server = startServer({QStringLiteral("--cars"), QStringLiteral("2")});
    QVERIFY(server->isRunning());
    HttpClient http(server->host(), server->port());
    const HttpResponse booked = http.postJson("/api/v1/bookings", {{"rider_id", "waiting"}, {"pickup", kPickup}});
    TC_VERIFY_STATUS(booked, 201);
    const qint64 id = bookingId(booked);
    const QByteArray token = riderToken(booked.json());
    stepForward(http, qint64(booked.json().value("created_ms").toDouble()));
    const QJsonObject after = readBooking(http, id, token).json();
    QVERIFY2(after.value("state").toString() != QStringLiteral("expired"), QJsonDocument(after).toJson().constData());
    QCOMPARE(server->stop(), 0);
}

// Two hours forward while the rider is on board: the time charged is the seconds on board, not the
// step (at 30× simulated time a few real seconds are ~100 simulated ones; the step would be 60 h).
void ClockStepTest::aStepDuringATripIsNotBilled()
{
    auto server = startServer({QStringLiteral("--cars"), QStringLiteral("60"), QStringLiteral("--sim-speed"),
                               QStringLiteral("30"), QStringLiteral("--pickup-timeout"), QStringLiteral("36000")});
    QVERIFY(server->isRunning());
    HttpClient http(server->host(), server->port());
    const HttpResponse booked =
        http.postJson("/api/v1/bookings", {{"rider_id", "on-board"}, {"pickup", kPickup}, {"dropoff", kDropoff}});
    TC_VERIFY_STATUS(booked, 201);
    const qint64 id = bookingId(booked);
    const QByteArray token = riderToken(booked.json());
    QJsonObject last;
    QVERIFY2(waitUntil(
                 [&] {
                     last = readBooking(http, id, token).json();
                     return last.value("state").toString() == QStringLiteral("arriving");
                 },
                 kWaitMs),
             QJsonDocument(last).toJson().constData());
    TC_VERIFY_STATUS(moveBooking(http, id, "pickup", token), 200);
    stepForward(http, qint64(booked.json().value("created_ms").toDouble()));

    // While on board, the rider's view counts the same seconds.
    const double onBoardS = readBooking(http, id, token).json().value("duration_s").toDouble(-1);
    QVERIFY2(onBoardS >= 0 && onBoardS < 600, qPrintable(QStringLiteral("on board for %1 s").arg(onBoardS)));
    const HttpResponse done = moveBooking(http, id, "complete", token);
    TC_VERIFY_STATUS(done, 200);
    const double durationS = done.json().value("duration_s").toDouble();
    QVERIFY2(durationS > 0 && durationS < 600, done.body.constData());
    const QJsonObject fare = done.json().value("fare").toObject();
    QVERIFY2(fare.value("time_charge").toDouble() <= fare.value("per_minute").toDouble() * 10 + 0.01,
             done.body.constData());
    QCOMPARE(server->stop(), 0);
}

QTEST_GUILESS_MAIN(ClockStepTest)
#include "trip_clock_step_test.moc"
