// A wall clock stepped forward, then a crash, does not expire a waiting booking at the restart.
// A real taxicore-server on a real ledger (an SQLite file, or a private PostgreSQL): a booking
// waits for its rider (its car still driving to the pickup, or standing there), the server's wall
// clock steps an hour forward (libfaketime, tests/support/FakeClock.h; the monotonic clock is the
// host's, as a step leaves it), the ledger gets a checkpoint stamped after the step, kill -9, and
// a restart with the clock still an hour ahead. The booking is still waiting, and it expires once
// its real pickup timeout has passed, neither earlier nor much later. On the old code the restart
// aged the booking by the wall clock alone (now − created_ms: an hour) and expired it at the first
// sweep; a booking whose car stood at the pickup got no checkpoint after the step at all.

#include "ApiAssert.h"
#include "FakeClock.h"
#include "HttpClient.h"
#include "LedgerValue.h"
#include "PostgresKit.h"
#include "RequireTool.h"
#include "RiderToken.h"
#include "ServerProcess.h"
#include "Wait.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <memory>

using namespace taxicore::test;

namespace {

constexpr qint64 kStepS = 3600;
// The pickup timeout in real seconds: longer than everything before the restart takes (the car
// reaching the pickup, the step reaching the server, a checkpoint, the kill and the restart).
constexpr int kPickupTimeoutRealS = 30;
// Expiry sweeps run every 500 ms; the poll, the restart's first sweep and a loaded machine add more.
constexpr int kExpiryLateByMs = 5000;
// An expiry observed this much before the timeout is early (the poll's own lag is well below it).
constexpr int kExpiryEarlyByMs = 1000;
constexpr int kStartMs = 20'000;
constexpr int kWaitMs = 15'000;
// The one car (seed 5) starts ~5 km from the pickup: ~550 simulated seconds, at 100× ~6 real ones.
constexpr int kArriveWaitMs = 20'000;
constexpr int kPollMs = 100;
const QJsonObject kPickup{{"lat", 57.7003}, {"lng", 11.9668}};

QString stateOf(const HttpResponse &r)
{
    return r.json().value("state").toString();
}

bool isWaiting(const QString &state)
{
    return state == QStringLiteral("assigned") || state == QStringLiteral("arriving");
}

} // namespace

class ClockStepRestoreTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void aStepBeforeACrashExpiresNoWaitingBooking_data();
    void aStepBeforeACrashExpiresNoWaitingBooking();

private:
    // The wall-clock time (ms) of booking `id`'s last checkpoint in the ledger; 0: none.
    qint64 checkpointMs(bool postgres, const QTemporaryDir &dir, qint64 id);

    QTemporaryDir m_dir;
    std::unique_ptr<PostgresKit> m_pg; // started by the first PostgreSQL row
};

void ClockStepRestoreTest::initTestCase()
{
    TC_REQUIRE_TOOL(fakeTimeAvailable(), "libfaketime is not installed (package faketime)");
    QVERIFY(m_dir.isValid());
}

qint64 ClockStepRestoreTest::checkpointMs(bool postgres, const QTemporaryDir &dir, qint64 id)
{
    if (postgres)
        return m_pg->psql(QStringLiteral("SELECT coalesce(progress_ms, 0) FROM bookings WHERE id = %1").arg(id))
            .toLongLong();
    return ledgerValue(dir, QStringLiteral("SELECT ifnull(progress_ms, 0) FROM bookings WHERE id = %1").arg(id))
        .toLongLong();
}

void ClockStepRestoreTest::aStepBeforeACrashExpiresNoWaitingBooking_data()
{
    QTest::addColumn<bool>("postgres");
    // Slow: the car still drives to the pickup at the kill. Fast: it waits there already (arriving).
    QTest::addColumn<int>("simSpeed");
    QTest::newRow("sqlite-driving") << false << 1;
    QTest::newRow("sqlite-at-pickup") << false << 100;
    QTest::newRow("postgresql-driving") << true << 1;
    QTest::newRow("postgresql-at-pickup") << true << 100;
}

void ClockStepRestoreTest::aStepBeforeACrashExpiresNoWaitingBooking()
{
    QFETCH(bool, postgres);
    QFETCH(int, simSpeed);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    QStringList args{QStringLiteral("--data-dir"),       dir.path(),
                     QStringLiteral("--cars"),           QStringLiteral("1"),
                     QStringLiteral("--seed"),           QStringLiteral("5"),
                     QStringLiteral("--demand-rate"),    QStringLiteral("0"),
                     QStringLiteral("--sim-speed"),      QString::number(simSpeed),
                     QStringLiteral("--pickup-timeout"), QString::number(kPickupTimeoutRealS * simSpeed)};
    if (postgres) {
        TC_REQUIRE_TOOL(!PostgresKit::binDir().isEmpty(), "PostgreSQL (initdb, postgres) is not installed");
        if (!m_pg)
            m_pg = std::make_unique<PostgresKit>();
        QVERIFY2(m_pg->start(), qPrintable(m_pg->error()));
        m_pg->psql(QStringLiteral("DROP SCHEMA public CASCADE; CREATE SCHEMA public")); // a fresh ledger per row
        args << QStringLiteral("--ledger") << m_pg->url();
    }
    const QString offsetFile = m_dir.filePath(QStringLiteral("offset-%1").arg(QTest::currentDataTag()));
    QVERIFY(setWallClockOffset(offsetFile, 0));

    auto first = std::make_unique<ServerProcess>(args);
    first->setEnvironment(steppableWallClock(offsetFile));
    QVERIFY2(first->start(kStartMs), qPrintable(first->error()));
    qint64 id = 0;
    QByteArray token;
    QElapsedTimer sinceBooked;
    {
        HttpClient http(first->host(), first->port());
        const HttpResponse booked = http.postJson("/api/v1/bookings", {{"rider_id", "waits"}, {"pickup", kPickup}});
        TC_VERIFY_STATUS(booked, 201);
        sinceBooked.start();
        id = qint64(booked.json().value("booking_id").toDouble());
        token = riderToken(booked.json());
        const qint64 createdMs = qint64(booked.json().value("created_ms").toDouble());
        const QString expected = simSpeed > 1 ? QStringLiteral("arriving") : QStringLiteral("assigned");
        HttpResponse seen;
        QVERIFY2(waitUntil(
                     [&] {
                         seen = readBooking(http, id, token);
                         return stateOf(seen) == expected;
                     },
                     kArriveWaitMs, kPollMs),
                 seen.body.constData());

        // An hour forward; the ledger's checkpoint of the booking is stamped after the step.
        QVERIFY(setWallClockOffset(offsetFile, kStepS));
        QVERIFY2(
            waitUntil([&] { return checkpointMs(postgres, dir, id) >= createdMs + kStepS * 1000; }, kWaitMs, kPollMs),
            "no checkpoint of the waiting booking after the step");
        seen = readBooking(http, id, token);
        QCOMPARE(stateOf(seen), expected); // the running server did not expire it (monotonic age)
    }
    ::kill(pid_t(first->pid()), SIGKILL);
    QVERIFY(first->waitForExit(5000));
    first.reset();

    // The restart: the wall clock is still an hour ahead of when the booking was made.
    ServerProcess second(args);
    second.setEnvironment(steppableWallClock(offsetFile));
    QVERIFY2(second.start(kStartMs), qPrintable(second.error()));
    HttpClient http(second.host(), second.port());
    const HttpResponse restored = readBooking(http, id, token);
    TC_VERIFY_STATUS(restored, 200);
    QVERIFY2(isWaiting(stateOf(restored)), qPrintable(QStringLiteral("%1 s after booking: %2")
                                                          .arg(sinceBooked.elapsed() / 1000.0)
                                                          .arg(QString::fromUtf8(restored.body))));

    // It expires once its pickup timeout has passed in real time, counted from the booking.
    const qint64 timeoutMs = kPickupTimeoutRealS * 1000;
    HttpResponse last;
    QVERIFY2(waitUntil(
                 [&] {
                     last = readBooking(http, id, token);
                     return stateOf(last) == QStringLiteral("expired");
                 },
                 int(timeoutMs - sinceBooked.elapsed() + kExpiryLateByMs), kPollMs),
             qPrintable(QStringLiteral("%1 s after booking: %2")
                            .arg(sinceBooked.elapsed() / 1000.0)
                            .arg(QString::fromUtf8(last.body))));
    QVERIFY2(sinceBooked.elapsed() >= timeoutMs - kExpiryEarlyByMs,
             qPrintable(QStringLiteral("expired %1 s after booking; the timeout is %2 s")
                            .arg(sinceBooked.elapsed() / 1000.0)
                            .arg(kPickupTimeoutRealS)));
    QCOMPARE(second.stop(), 0);
}

QTEST_GUILESS_MAIN(ClockStepRestoreTest)
#include "ledger_server_clock_step_restore_test.moc"
