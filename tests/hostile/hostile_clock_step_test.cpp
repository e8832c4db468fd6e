// Issue 14 item 7: durations on the monotonic clock. taxicore-server in processes mode runs with
// its wall clock stepped forward by 10 s five times, 0.6 s apart, in every server process
// (libfaketime, tests/support/FakeClock.h; each process reads the offset at most once a second),
// as NTP or an operator setting the date would.
// Heartbeats, the supervisor's liveness check and the crash-loop breaker measure durations on
// CLOCK_MONOTONIC, so no worker is declared silent, none is restarted, the breaker does not
// trip and every request is answered. (Before: the supervisor saw 10 s old heartbeats and killed
// the workers, and the restarts tripped the breaker.)

#include "ConnectionsKit.h"
#include "FakeClock.h"
#include "RequireTool.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QTemporaryDir>

using namespace taxicore::test;
using namespace taxicore::test::rt;

namespace {
constexpr int kSteps = 5;
constexpr qint64 kStepMs = 10'000;
constexpr int kStepGapMs = 600;
// Shorter than one step, so a heartbeat age measured on the wall clock would always exceed it.
constexpr int kHeartbeatTimeoutMs = 2000;
} // namespace

class ClockStepTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void wallClockStepRestartsNoWorker();
};

void ClockStepTest::wallClockStepRestartsNoWorker()
{
    TC_REQUIRE_TOOL(fakeTimeAvailable(), "libfaketime is not installed (package faketime)");
    QTemporaryDir scratch;
    QVERIFY(scratch.isValid());
    const QString offsetFile = scratch.filePath(QStringLiteral("offset"));
    QVERIFY(setWallClockOffset(offsetFile, 0));
    ServerProcess server({QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"),
                          QStringLiteral("2"), QStringLiteral("--cars"), QStringLiteral("50"),
                          QStringLiteral("--heartbeat-timeout"), QString::number(kHeartbeatTimeoutMs)});
    // The workers inherit the primary's environment, and with it the stepped clock.
    server.setEnvironment(steppableWallClock(offsetFile));
    QVERIFY2(server.start(), qPrintable(server.error()));
    QVERIFY2(waitForWorkersTakingConnections(server, 2, 20'000), qPrintable(describeEvents(server)));
    const QList<WorkerInfo> before = serving(server);

    // Through the steps and then longer than the heartbeat timeout: every request answered.
    QElapsedTimer clock;
    clock.start();
    QStringList failures;
    int stepsTaken = 0;
    while (clock.elapsed() < kSteps * kStepGapMs + 2 * kHeartbeatTimeoutMs) {
        if (stepsTaken < kSteps && clock.elapsed() >= stepsTaken * kStepGapMs)
            QVERIFY(setWallClockOffset(offsetFile, ++stepsTaken * kStepMs / 1000));
        const HttpResponse hello = call(server, "GET", "/hello", {}, 5000);
        if (!hello.complete || hello.status != 200)
            failures.append(
                QStringLiteral("at %1 ms: %2").arg(clock.elapsed()).arg(QString::fromUtf8(hello.describe())));
        QTest::qWait(50);
    }

    // The server's wall clock did step: an event it records now carries the stepped time.
    const HttpResponse recorded = call(server, "POST", "/admin/v1/events", R"({"kind":"clock_probe"})");
    QCOMPARE(recorded.status, 201);
    const qint64 skewMs =
        qint64(recorded.json().value(QStringLiteral("at_ms")).toDouble()) - QDateTime::currentMSecsSinceEpoch();
    // At least one step (a process reads the offset file at most once a second).
    QVERIFY2(skewMs > kStepMs / 2, qPrintable(QStringLiteral("server clock ahead by only %1 ms").arg(skewMs)));

    QVERIFY2(failures.isEmpty(), qPrintable(failures.mid(0, 5).join(QLatin1Char('\n'))));
    for (const QString &kind : {QStringLiteral("stall"), QStringLiteral("crash"), QStringLiteral("respawn"),
                                QStringLiteral("breaker"), QStringLiteral("fallback")})
        QVERIFY2(eventsOfKind(server, kind).isEmpty(), qPrintable(describeEvents(server)));
    const QList<WorkerInfo> after = serving(server);
    QCOMPARE(after.size(), before.size());
    for (qsizetype i = 0; i < before.size(); ++i) {
        QCOMPARE(after[i].index, before[i].index);
        QCOMPARE(after[i].pid, before[i].pid);
        QCOMPARE(after[i].restarts, before[i].restarts);
    }
    QCOMPARE(getJson(server, "/admin/v1/runtime").value(QStringLiteral("mode")).toString(),
             QStringLiteral("processes"));
}

QTEST_GUILESS_MAIN(ClockStepTest)
#include "hostile_clock_step_test.moc"
