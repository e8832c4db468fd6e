// Issue 14 item 4: accepting backs off when the process is out of descriptors. taxicore-server
// runs with RLIMIT_NOFILE 256 (soft and hard, so it cannot raise it) and 1,000 connections are
// held open against it: the kernel queue keeps what it cannot accept, and a level-triggered
// accept loop would wake at once for ever, calling accept4 → EMFILE (more than a second of CPU
// per 3 s). AcceptLoop switches accepting off for a back-off instead, so the server's CPU over
// 3 s stays small; the EMFILE is logged once, not per call; once the clients go, it serves again.
// In processes mode the primary passes connections on; a worker out of descriptors receives none
// (the kernel drops it from the message) and declines, so the primary serves it itself and runs
// out of descriptors in turn.

#include "ConnectionsKit.h"

#include <QTemporaryDir>

using namespace taxicore::test;
using namespace taxicore::test::rt;
using namespace taxicore::test::hostile;

namespace {
constexpr int kFileLimit = 256;
constexpr int kHeldConnections = 1000;
constexpr int kMeasureMs = 3000;
constexpr qint64 kMaxCpuMs = 300; // the spinning loop took > 1000 ms here
} // namespace

class AcceptBackoffTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { raiseOwnFileLimit(); }
    void outOfDescriptorsDoesNotSpin_data();
    void outOfDescriptorsDoesNotSpin();
};

void AcceptBackoffTest::outOfDescriptorsDoesNotSpin_data()
{
    QTest::addColumn<QString>("mode");
    QTest::newRow("single") << QStringLiteral("single");
    QTest::newRow("pool") << QStringLiteral("pool");
    QTest::newRow("processes") << QStringLiteral("processes");
}

void AcceptBackoffTest::outOfDescriptorsDoesNotSpin()
{
    QFETCH(QString, mode);
#if defined(__SANITIZE_ADDRESS__)
    // Under make test-asan the server aborts in UBSan's own vptr check: on a type-cache miss the
    // check proves the vtable readable by writing it into a pipe(), which fails with EMFILE in a
    // process out of descriptors, so the object reads as "invalid vptr" (seen in the event loop's
    // timer dispatch, TimerSchedule.cpp, on a QTimerEvent on the stack). The one place a worker
    // is released is exempt (WorkerSupervisor::release); here every virtual call in the loop
    // would be. The premise of this test and that check exclude each other; the plain build runs it.
    QSKIP("out of descriptors, UBSan's vptr check cannot open its probe pipe and aborts the server");
#endif
    // A wrapper named taxicore-server that lowers the limit and execs the real one (same pid;
    // its workers, started from the real binary's directory, inherit the limit).
    QTemporaryDir wrapperDir;
    QVERIFY(wrapperDir.isValid());
    const QString realBinary = ServerProcess::binary();
    QFile wrapper(wrapperDir.filePath(QStringLiteral("taxicore-server")));
    QVERIFY(wrapper.open(QIODevice::WriteOnly));
    wrapper.write("#!/bin/sh\nulimit -n " + QByteArray::number(kFileLimit) + " || exit 97\nexec '"
                  + realBinary.toLocal8Bit() + "' \"$@\"\n");
    wrapper.close();
    wrapper.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);

    ServerProcess server({QStringLiteral("--mode"), mode, QStringLiteral("--workers"), QStringLiteral("2"),
                          QStringLiteral("--threads"), QStringLiteral("2"), QStringLiteral("--cars"),
                          QStringLiteral("50")});
    const QByteArray binDir = qgetenv("TAXICORE_BIN_DIR");
    qputenv("TAXICORE_BIN_DIR", wrapperDir.path().toLocal8Bit());
    const bool started = server.start();
    qputenv("TAXICORE_BIN_DIR", binDir);
    QVERIFY2(started, qPrintable(server.error()));
    if (mode == QStringLiteral("processes"))
        QVERIFY2(waitForWorkersTakingConnections(server, 2, 20'000), qPrintable(describeEvents(server)));

    SocketHerd herd;
    QCOMPARE(herd.open(server.port(), kHeldConnections), kHeldConnections);
    // The server takes what it can and runs out of descriptors (it says so once per episode).
    QVERIFY2(waitUntil([&] { return server.stderrText().contains("accept: Too many open files"); }, 10'000, 20),
             "the server never ran out of descriptors");
    const qint64 cpu = cpuOver(server.pid(), kMeasureMs);
    qInfo("%s: %lld ms of CPU over %d ms with %d connections held", qPrintable(mode), cpu, kMeasureMs,
          kHeldConnections);
    const QByteArray log = server.stderrText();
    // A server that died meanwhile spent no CPU: the bound below would pass over it.
    QVERIFY2(server.isRunning(),
             qPrintable(QStringLiteral("the server died; stderr: %1").arg(QString::fromLocal8Bit(log.right(1500)))));
    QVERIFY2(cpu < kMaxCpuMs, qPrintable(QStringLiteral("%1 ms of CPU in %2 ms; stderr: %3")
                                             .arg(cpu)
                                             .arg(kMeasureMs)
                                             .arg(QString::fromLocal8Bit(log.right(600)))));
    const qsizetype logged = log.count("accept: Too many open files");
    QVERIFY2(logged >= 1, qPrintable(QString::fromLocal8Bit(log.right(600))));
    // Once per episode, not once per accept4 call (thousands): single and pool have one episode
    // while the clients are held; in processes mode the primary's episodes end whenever a passed
    // connection frees a descriptor, and the workers may have their own.
    QVERIFY2(logged <= (mode == QStringLiteral("processes") ? 10 : 1),
             qPrintable(QString::fromLocal8Bit(log.right(600))));

    herd.closeAll();
    QVERIFY2(waitUntil([&] { return call(server, "GET", "/hello", {}, 2000).status == 200; }, 10'000),
             "the server did not serve again after the clients left");
}

QTEST_GUILESS_MAIN(AcceptBackoffTest)
#include "hostile_accept_backoff_test.moc"
