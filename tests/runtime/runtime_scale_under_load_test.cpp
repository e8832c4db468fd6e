// Processes mode under wrk load at 64 connections on /hello: workers 1 → 4 → 1 through
// PUT /admin/v1/runtime. /admin/v1/workers shows 4 serving (each taking requests), then 1; the
// three drained workers leave an "exit" event (not "crash"), and no request failed.

#include "RequireTool.h"
#include "RuntimeKit.h"

#include <QElapsedTimer>

using namespace taxicore::test;
using namespace taxicore::test::rt;

namespace {
constexpr qint64 kWarmRequests = 500; // served under wrk's load before the first change
} // namespace

class ScaleUnderLoadTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void scaleUpAndDownFailsNoRequest();
};

void ScaleUnderLoadTest::scaleUpAndDownFailsNoRequest()
{
    TC_REQUIRE_TOOL(!Wrk::program().isEmpty(),
                    "wrk is not installed (apt-get install wrk, or scripts/install-deps.sh)");
    ServerProcess server({QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"),
                          QStringLiteral("1"), QStringLiteral("--cars"), QStringLiteral("50"),
                          QStringLiteral("--sim-speed"), QStringLiteral("0.001")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    QVERIFY2(waitForServingWorkers(server, 1, 10'000), qPrintable(describeEvents(server)));

    Wrk wrk;
    QVERIFY2(wrk.start(server.url(), "/hello", 64, 18), "cannot start wrk");
    QElapsedTimer clock;
    clock.start();
    // The load is flowing before the scale-up (was a fixed 2 s warm-up).
    QVERIFY2(waitUntil(
                 [&] {
                     qint64 served = 0;
                     for (const WorkerInfo &w : serving(server))
                         served += w.requests;
                     return served >= kWarmRequests;
                 },
                 10'000, 100),
             "wrk's load did not reach the worker");

    HttpResponse put = putRuntime(server, {{QStringLiteral("workers"), 4}});
    TC_VERIFY_STATUS(put, 200);
    QCOMPARE(put.json().value(QStringLiteral("workers")).toInt(), 4);
    QList<WorkerInfo> four;
    QVERIFY2(
        waitUntil(
            [&] {
                four = serving(server);
                return four.size() == 4;
            },
            8000, 100),
        qPrintable(
            QStringLiteral("%1 workers serving; events: %2").arg(serving(server).size()).arg(describeEvents(server))));
    const qint64 fourAt = clock.elapsed();
    // wrk's keep-alive connections stay where they are; new connections reach every worker.
    int helloFailures = 0;
    QVERIFY2(waitUntil(
                 [&] {
                     const HttpResponse hello = call(server, "GET", "/hello");
                     if (!hello.complete || hello.status != 200)
                         ++helloFailures;
                     for (const WorkerInfo &w : std::as_const(four)) {
                         const WorkerInfo now = worker(server, w.index);
                         if (now.pid != w.pid || now.requests <= w.requests)
                             return false;
                     }
                     return true;
                 },
                 5000, 20),
             "not every one of the 4 workers takes new connections");
    QCOMPARE(helloFailures, 0);
    // Deliberately fixed: a second of load on four workers, so the scale-down below drains
    // workers that are busy (there is no event to wait for).
    QTest::qWait(1000);
    qInfo("4 workers serving %lld ms after the load started", fourAt);

    put = putRuntime(server, {{QStringLiteral("workers"), 1}});
    TC_VERIFY_STATUS(put, 200);
    QCOMPARE(put.json().value(QStringLiteral("workers")).toInt(), 1);
    QList<WorkerInfo> listed;
    QVERIFY2(
        waitUntil(
            [&] {
                listed = workers(server);
                return listed.size() == 1;
            },
            12'000, 100),
        qPrintable(
            QStringLiteral("%1 workers listed; events: %2").arg(workers(server).size()).arg(describeEvents(server))));
    QCOMPARE(listed.first().index, 1);
    QCOMPARE(listed.first().state, QStringLiteral("serving"));
    for (const WorkerInfo &w : std::as_const(four))
        if (w.index != 1)
            QVERIFY2(waitUntil([&] { return !pidAlive(w.pid); }, 2000), "a drained worker is still running");
    qInfo("back to 1 worker %lld ms after the load started", clock.elapsed());

    const WrkResult load = wrk.finish();
    QVERIFY2(server.isRunning(), "the server died: " + server.stderrText());
    QVERIFY2(load.finished, load.describe().constData());
    QVERIFY2(load.requests > 1000, load.describe().constData());
    QVERIFY2(load.socketErrors() == 0, load.describe() + "\nevents: " + describeEvents(server).toUtf8());
    QVERIFY2(load.non2xx == 0, load.describe().constData());
    const QStringList exits = eventsOfKind(server, QStringLiteral("exit"));
    QVERIFY2(exits.size() == 3, qPrintable(describeEvents(server)));
    for (int index : {2, 3, 4})
        QVERIFY2(exits.filter(QStringLiteral("worker %1 ").arg(index)).size() == 1,
                 qPrintable(exits.join(QLatin1Char('\n'))));
    QVERIFY2(eventsOfKind(server, QStringLiteral("crash")).isEmpty(), qPrintable(describeEvents(server)));
}

QTEST_GUILESS_MAIN(ScaleUnderLoadTest)
#include "runtime_scale_under_load_test.moc"
