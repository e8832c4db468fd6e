// TAXICORE_WORKER_FAULT=crash-at-start (inherited by the workers) and --mode processes: every
// worker aborts at start. The primary still starts and prints its listening line; within ~20 s
// the supervisor trips the crash-loop breaker ("breaker" and "fallback" events), stops
// respawning, and GET /admin/v1/runtime says pool. /hello answers 200 during and after.

#include "RuntimeKit.h"

#include <QElapsedTimer>

using namespace taxicore::test;
using namespace taxicore::test::rt;

class CrashLoopBreakerTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void crashLoopFallsBackToPool();
};

void CrashLoopBreakerTest::crashLoopFallsBackToPool()
{
    ServerProcess server({QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"),
                          QStringLiteral("2"), QStringLiteral("--cars"), QStringLiteral("50"),
                          QStringLiteral("--sim-speed"), QStringLiteral("0.001")});
    // QProcess passes the environment as it is at start().
    qputenv("TAXICORE_WORKER_FAULT", "crash-at-start");
    const bool started = server.start();
    qunsetenv("TAXICORE_WORKER_FAULT");
    QVERIFY2(started, qPrintable(server.error()));

    QElapsedTimer clock;
    clock.start();
    int answered = 0;
    QStringList failures;
    qint64 fellBackMs = -1;
    while (clock.elapsed() < 20'000) {
        const HttpResponse hello = call(server, "GET", "/hello", {}, 5000);
        if (hello.complete && hello.status == 200)
            ++answered;
        else
            failures.append(
                QStringLiteral("at %1 ms: %2").arg(clock.elapsed()).arg(QString::fromUtf8(hello.describe())));
        if (!eventsOfKind(server, QStringLiteral("fallback")).isEmpty()
            && getJson(server, "/admin/v1/runtime").value(QStringLiteral("mode")).toString()
                   == QStringLiteral("pool")) {
            fellBackMs = clock.elapsed();
            break;
        }
        QTest::qWait(100);
    }
    QVERIFY2(fellBackMs >= 0,
             qPrintable(QStringLiteral("no fallback to pool within 20 s; events: %1").arg(describeEvents(server))));
    qInfo("fell back to pool after %lld ms", fellBackMs);
    QCOMPARE(eventsOfKind(server, QStringLiteral("breaker")).size(), 1);
    QVERIFY2(eventsOfKind(server, QStringLiteral("crash")).size() >= 5, qPrintable(describeEvents(server)));
    // Each crash names the process that crashed, though it died before it could say who it was.
    for (const QString &crash : eventsOfKind(server, QStringLiteral("crash")))
        QVERIFY2(!crash.contains(QStringLiteral("(pid 0)")) && crash.contains(QStringLiteral("(pid ")),
                 qPrintable(crash));

    // No more respawns: the crash count stays put, and no worker is listed as running. (Paced
    // on purpose: "nothing happens for 2 s" has no event to wait for.)
    const qsizetype crashes = eventsOfKind(server, QStringLiteral("crash")).size();
    const qsizetype respawns = eventsOfKind(server, QStringLiteral("respawn")).size();
    for (int i = 0; i < 20; ++i) {
        const HttpResponse hello = call(server, "GET", "/hello", {}, 5000);
        if (hello.complete && hello.status == 200)
            ++answered;
        else
            failures.append(QStringLiteral("after fallback: %1").arg(QString::fromUtf8(hello.describe())));
        QTest::qWait(100);
    }
    QCOMPARE(eventsOfKind(server, QStringLiteral("crash")).size(), crashes);
    QCOMPARE(eventsOfKind(server, QStringLiteral("respawn")).size(), respawns);
    QVERIFY2(workers(server).isEmpty(), qPrintable(describeEvents(server)));
    const QJsonObject runtime = getJson(server, "/admin/v1/runtime");
    QCOMPARE(runtime.value(QStringLiteral("mode")).toString(), QStringLiteral("pool"));
    QVERIFY2(failures.isEmpty(), qPrintable(failures.join(QLatin1Char('\n'))));
    QVERIFY(answered >= 20);
    QVERIFY2(server.isRunning(), "the server died: " + server.stderrText());
}

QTEST_GUILESS_MAIN(CrashLoopBreakerTest)
#include "runtime_crash_loop_breaker_test.moc"
