// Issue 14 item 7: durations on the monotonic clock. taxicore-server in processes mode runs
// under an LD_PRELOAD shim (ClockStepShim.cpp) that steps the wall clock forward by 10 s five
// times, 0.6 s apart, in every server process, as NTP or an operator setting the date would.
// Heartbeats, the supervisor's liveness check and the crash-loop breaker measure durations on
// CLOCK_MONOTONIC, so no worker is declared silent, none is restarted, the breaker does not
// trip and every request is answered. (Before: the supervisor saw 10 s old heartbeats and killed
// the workers, and the restarts tripped the breaker.)

#include "ConnectionsKit.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QTemporaryDir>

using namespace taxicore::test;
using namespace taxicore::test::rt;

namespace {
constexpr int kSteps = 5;
constexpr qint64 kStepMs = 10'000;
constexpr int kStepGapMs = 600; // as in the shim
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
    QTemporaryDir scratch;
    QVERIFY(scratch.isValid());
    const QString trigger = scratch.filePath(QStringLiteral("step-now"));
    ServerProcess server({QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"),
                          QStringLiteral("2"), QStringLiteral("--cars"), QStringLiteral("50"),
                          QStringLiteral("--heartbeat-timeout"), QString::number(kHeartbeatTimeoutMs)});
    // QProcess passes the environment as it is at start(); the workers inherit the primary's.
    qputenv("LD_PRELOAD", TAXICORE_CLOCK_STEP_SHIM);
    qputenv("TAXICORE_TEST_CLOCK_STEP_FILE", trigger.toLocal8Bit());
    qputenv("TAXICORE_TEST_CLOCK_STEP_MS", QByteArray::number(kStepMs));
    qputenv("TAXICORE_TEST_CLOCK_STEPS", QByteArray::number(kSteps));
    const bool started = server.start();
    for (const char *name :
         {"LD_PRELOAD", "TAXICORE_TEST_CLOCK_STEP_FILE", "TAXICORE_TEST_CLOCK_STEP_MS", "TAXICORE_TEST_CLOCK_STEPS"})
        qunsetenv(name);
    QVERIFY2(started, qPrintable(server.error()));
    QVERIFY2(waitForWorkersTakingConnections(server, 2, 20'000), qPrintable(describeEvents(server)));
    const QList<WorkerInfo> before = serving(server);

    QFile step(trigger);
    QVERIFY(step.open(QIODevice::WriteOnly));
    step.close();
    // Through the steps and then longer than the heartbeat timeout: every request answered.
    QElapsedTimer clock;
    clock.start();
    QStringList failures;
    while (clock.elapsed() < kSteps * kStepGapMs + 2 * kHeartbeatTimeoutMs) {
        const HttpResponse hello = call(server, "GET", "/hello", {}, 5000);
        if (!hello.complete || hello.status != 200)
            failures.append(
                QStringLiteral("at %1 ms: %2").arg(clock.elapsed()).arg(QString::fromUtf8(hello.describe())));
        QTest::qWait(50);
    }

    // The shim did step the server's wall clock: an event it records now carries the stepped time.
    const HttpResponse recorded = call(server, "POST", "/admin/v1/events", R"({"kind":"clock_probe"})");
    QCOMPARE(recorded.status, 201);
    const qint64 skewMs =
        qint64(recorded.json().value(QStringLiteral("at_ms")).toDouble()) - QDateTime::currentMSecsSinceEpoch();
    // At least one step: the shim counts its steps from a process's first wall-clock read after
    // the trigger, and a worker now reads the wall clock rarely.
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
