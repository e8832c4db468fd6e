// Process life: the exact first stdout line, SIGTERM/SIGINT/SIGHUP draining in-flight requests and
// exiting 0 within the grace period (a SIGHUP ignored by nohup staying ignored), a signal while
// starting stopping it at once, a thread the system refuses (ulimit -v) being a message rather than
// an abort, and clear failures for a busy port (IPv4 and IPv6, against another taxicore-server
// whose listeners use SO_REUSEPORT), a refused bind and bad flags (a stray argument among them).

#include "ApiAssert.h"
#include "HttpClient.h"
#include "ProcessInfo.h"
#include "RawSocket.h"
#include "ServerProcess.h"
#include "SlowFib.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QScopeGuard>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>
#include <grp.h>
#include <memory>
#include <pwd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace taxicore::test;

namespace {
constexpr int kGraceMs = 5000; // taxicore-server's shutdown grace period
// A request that takes a few hundred ms on this machine kind (fib 38 is ~150 ms here).
constexpr int kSlowFib = 40;
const QByteArray kSlowFibValue = "102334155";
// CPU the server spends past its idle use once it computes the slow request (clock ticks are 10 ms).
constexpr int kComputingCpuMs = 30;
// How long a server refused at start may take to exit (it exits at once; one that starts never does).
constexpr int kRefusedStartWaitMs = 5000;
// A server still starting when it is signalled: how long it may take to install its signal
// handler (the start begins right after; under make test-asan more than 300 ms), how long it is
// then given to be stuck in its start, and how soon it must be gone after the signal.
constexpr int kHandlerInstalledMs = 10'000;
constexpr int kStuckInStartMs = 300;
constexpr int kStopWhileStartingMs = 2000;
// An address-space limit (ulimit -v 400000) under which the server's start cannot make all its
// threads here: the city, the region and each thread's stack and malloc arena are reserved address space.
constexpr rlim_t kTooLittleAddressSpace = 400'000ull * 1024;
constexpr int kAddressSpaceAttempts = 3;
constexpr int kAddressSpaceAttemptMs = 3000;

bool canListenOnIpv6Loopback()
{
    QTcpServer probe;
    return probe.listen(QHostAddress::LocalHostIPv6, 0);
}

// net.ipv6.bindv6only: 0 (the usual default) makes `::` take IPv4 connections too (dual stack).
bool ipv6WildcardIsDualStack()
{
    QFile file(QStringLiteral("/proc/sys/net/ipv6/bindv6only"));
    return file.open(QIODevice::ReadOnly) && file.readAll().trimmed() == "0";
}

int firstUnprivilegedPort()
{
    QFile file(QStringLiteral("/proc/sys/net/ipv4/ip_unprivileged_port_start"));
    return file.open(QIODevice::ReadOnly) ? file.readAll().trimmed().toInt() : 1024;
}
} // namespace

class GracefulShutdownTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void firstStdoutLineIsExactlyListeningOn();
    void sigtermLetsTheInFlightRequestFinishAndExitsZero_data();
    void sigtermLetsTheInFlightRequestFinishAndExitsZero();
    void answerFinishedWhileDrainingSaysConnectionClose();
    void signalClosesIdleConnectionsAndExitsWithinTheGracePeriod_data();
    void signalClosesIdleConnectionsAndExitsWithinTheGracePeriod();
    void requestOnAnIdleConnectionWhileDrainingIsAnsweredWithClose();
    void signalToTheProcessGroupDrainsTheWorkersToo_data();
    void signalToTheProcessGroupDrainsTheWorkersToo();
    void sighupIgnoredAtStartStaysIgnored();
    void signalWhileStartingStopsTheProcessAtOnce_data();
    void signalWhileStartingStopsTheProcessAtOnce();
    void portInUseExitsNonZeroWithAClearMessage();
    void secondServerOnTheSamePortIsRefused_data();
    void secondServerOnTheSamePortIsRefused();
    void addressNotOnThisMachineIsNamedAsSuch_data();
    void addressNotOnThisMachineIsNamedAsSuch();
    void lowPortAsAnUnprivilegedUserIsNamedAsPermissionDenied();
    void threadTheSystemRefusesIsAMessageNotAnAbort();
    void badFlagExits2NamingTheFlag_data();
    void badFlagExits2NamingTheFlag();
    void versionPrintsTheVersion();
};

void GracefulShutdownTest::firstStdoutLineIsExactlyListeningOn()
{
    ServerProcess server(
        {QStringLiteral("--host"), QStringLiteral("127.0.0.1"), QStringLiteral("--cars"), QStringLiteral("10")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    QVERIFY(server.port() > 0);
    QCOMPARE(server.firstLine(), "listening on http://127.0.0.1:" + QByteArray::number(server.port()));
    // It really listens there.
    HttpClient http(server.host(), server.port(), 5000);
    TC_VERIFY_STATUS(http.get("/hello"), 200);
    // Two servers with --port 0 get different ports.
    ServerProcess other({QStringLiteral("--cars"), QStringLiteral("10")});
    QVERIFY2(other.start(), qPrintable(other.error()));
    QVERIFY(other.port() != server.port());
    QCOMPARE(other.stop(), 0);
    QCOMPARE(server.stop(), 0);
}

void GracefulShutdownTest::sigtermLetsTheInFlightRequestFinishAndExitsZero_data()
{
    QTest::addColumn<QString>("mode");
    QTest::newRow("single") << QStringLiteral("single");
    QTest::newRow("pool") << QStringLiteral("pool");
}

void GracefulShutdownTest::sigtermLetsTheInFlightRequestFinishAndExitsZero()
{
    QFETCH(QString, mode);
    ServerProcess server({QStringLiteral("--mode"), mode, QStringLiteral("--cars"), QStringLiteral("10")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    HttpClient slow(server.host(), server.port(), kGraceMs + 5000);
    QVERIFY(slow.connectToServer());
    const qint64 cpuBefore = treeCpuMs(server.pid());
    QVERIFY(slow.sendRaw("GET /fib?n=" + QByteArray::number(kSlowFib) + " HTTP/1.1\r\nHost: x\r\n\r\n"));
    QVERIFY2(waitForCpu(server.pid(), cpuBefore, kComputingCpuMs, 5000), "the slow request is not being computed");
    QVERIFY2(slow.socket()->bytesAvailable() == 0, "the slow request finished before SIGTERM; make it slower");
    QElapsedTimer timer;
    timer.start();
    QVERIFY(server.terminate());

    const QList<HttpResponse> answer = slow.readResponses(1);
    TC_VERIFY_STATUS(answer.value(0), 200);
    QVERIFY2(answer[0].body.contains(kSlowFibValue), answer[0].body.constData());
    QVERIFY2(slow.waitForPeerClose(kGraceMs), "the draining server kept the connection open");

    QVERIFY2(server.waitForExit(kGraceMs + 2000), "the server did not exit after SIGTERM");
    const qint64 exitedAfter = timer.elapsed();
    QCOMPARE(server.exitStatus(), QProcess::NormalExit);
    QVERIFY2(server.exitCode() == 0, qPrintable(QStringLiteral("exit code %1; stderr: %2")
                                                    .arg(server.exitCode())
                                                    .arg(QString::fromLocal8Bit(server.stderrText()))));
    QVERIFY2(exitedAfter <= kGraceMs + 1000, qPrintable(QStringLiteral("exited %1 ms after SIGTERM").arg(exitedAfter)));
}

void GracefulShutdownTest::answerFinishedWhileDrainingSaysConnectionClose()
{
    // The server closes the connection after the in-flight answer; RFC 9112 9.6 says that answer
    // SHOULD carry Connection: close, and clients such as wrk count a silent close as an error.
    ServerProcess server(
        {QStringLiteral("--mode"), QStringLiteral("pool"), QStringLiteral("--cars"), QStringLiteral("10")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    HttpClient slow(server.host(), server.port(), kGraceMs + 5000);
    QVERIFY(slow.connectToServer());
    const qint64 cpuBefore = treeCpuMs(server.pid());
    QVERIFY(slow.sendRaw("GET /fib?n=" + QByteArray::number(kSlowFib) + " HTTP/1.1\r\nHost: x\r\n\r\n"));
    QVERIFY2(waitForCpu(server.pid(), cpuBefore, kComputingCpuMs, 5000), "the slow request is not being computed");
    QVERIFY(server.terminate());
    const QList<HttpResponse> answer = slow.readResponses(1);
    TC_VERIFY_STATUS(answer.value(0), 200);
    QVERIFY(slow.waitForPeerClose(kGraceMs));
    QVERIFY(server.waitForExit(kGraceMs + 2000));
    QCOMPARE(answer[0].header("Connection").toLower(), QByteArray("close"));
}

void GracefulShutdownTest::signalClosesIdleConnectionsAndExitsWithinTheGracePeriod_data()
{
    QTest::addColumn<int>("signalNumber");
    QTest::newRow("SIGTERM") << int(SIGTERM);
    QTest::newRow("SIGINT") << int(SIGINT);
    QTest::newRow("SIGHUP (its terminal closed)") << int(SIGHUP);
}

void GracefulShutdownTest::signalClosesIdleConnectionsAndExitsWithinTheGracePeriod()
{
    QFETCH(int, signalNumber);
    ServerProcess server({QStringLiteral("--cars"), QStringLiteral("10")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    // An idle keep-alive connection must not hold the shutdown for the whole grace period.
    HttpClient idle(server.host(), server.port(), 5000);
    TC_VERIFY_STATUS(idle.get("/hello"), 200);
    QVERIFY(idle.isConnected());
    QElapsedTimer timer;
    timer.start();
    QCOMPARE(::kill(pid_t(server.pid()), signalNumber), 0);
    QVERIFY2(server.waitForExit(kGraceMs + 2000), "the server did not exit");
    QCOMPARE(server.exitStatus(), QProcess::NormalExit);
    QCOMPARE(server.exitCode(), 0);
    // Idle connections are kept a short while (a request may be on its way), never the whole grace.
    QVERIFY2(timer.elapsed() < kGraceMs,
             qPrintable(QStringLiteral("idle server took %1 ms to stop").arg(timer.elapsed())));
    QVERIFY(idle.waitForPeerClose(2000));
}

void GracefulShutdownTest::requestOnAnIdleConnectionWhileDrainingIsAnsweredWithClose()
{
    ServerProcess server({QStringLiteral("--cars"), QStringLiteral("10")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    HttpClient idle(server.host(), server.port(), 5000);
    TC_VERIFY_STATUS(idle.get("/hello"), 200);
    QVERIFY(server.terminate());
    // Draining has begun (its listener refuses new connections); the idle connection is still
    // open for a moment.
    QVERIFY2(waitUntil([&] { return connectOnce(server.port(), 500) == ECONNREFUSED; }, 5000, 5),
             "the server did not start draining");
    QVERIFY(idle.sendRaw("GET /fib?n=10 HTTP/1.1\r\nHost: x\r\n\r\n"));
    const HttpResponse r = idle.readResponses(1).value(0);
    if (r.complete) {
        // Answered: then it says the connection ends.
        TC_VERIFY_STATUS(r, 200);
        QCOMPARE(r.header("Connection").toLower(), QByteArray("close"));
    } else {
        // Or closed before the request was read: never a hang.
        QVERIFY2(r.error.contains(QStringLiteral("closed")), qPrintable(r.error));
    }
    QVERIFY(idle.waitForPeerClose(kGraceMs));
    QVERIFY(server.waitForExit(kGraceMs + 2000));
    QCOMPARE(server.exitCode(), 0);
}

void GracefulShutdownTest::signalToTheProcessGroupDrainsTheWorkersToo_data()
{
    QTest::addColumn<int>("signalNumber");
    QTest::newRow("SIGINT (Ctrl-C)") << int(SIGINT);
    QTest::newRow("SIGHUP (its terminal closed)") << int(SIGHUP);
}

// A terminal signals its whole foreground process group, the worker processes with the primary:
// the request a worker is computing must still be answered, and the server exit 0. The request
// must still be computing when the signal comes and be done within the grace period; on a loaded
// machine (make test-asan) the n sized before may miss either way, and withSlowFib signals a new
// server with a slower or faster request.
void GracefulShutdownTest::signalToTheProcessGroupDrainsTheWorkersToo()
{
    QFETCH(int, signalNumber);
    std::unique_ptr<ServerProcess> server;
    const auto startServer = [&] {
        server = std::make_unique<ServerProcess>(QStringList{QStringLiteral("--mode"), QStringLiteral("processes"),
                                                             QStringLiteral("--workers"), QStringLiteral("2"),
                                                             QStringLiteral("--cars"), QStringLiteral("10")});
        server->setChildModifier([] { ::setpgid(0, 0); }); // its own group, as a shell's job
        QVERIFY2(server->start(), qPrintable(server->error()));
        HttpClient admin(server->host(), server->port(), 5000);
        QVERIFY2(waitUntil(
                     [&] {
                         int serving = 0;
                         for (const QJsonValue &worker :
                              admin.get("/admin/v1/workers").json().value("workers").toArray())
                             serving += worker.toObject().value("state").toString() == QStringLiteral("serving");
                         return serving == 2;
                     },
                     10'000, 50),
                 "the workers did not start serving");
    };
    startServer();
    if (QTest::currentTestFailed())
        return;
    // About 2 s: still computing when the signal comes, done well within the grace period.
    withSlowFib(fibTaking(*server, kGraceMs / 2 - 500), [&](int n, SlowFibMiss &miss) {
        if (!server) { // each attempt after the first signals a new server
            startServer();
            if (QTest::currentTestFailed())
                return;
        }
        const auto done = qScopeGuard([&] { server.reset(); });
        HttpClient slow(server->host(), server->port(), kGraceMs + 5000);
        QVERIFY(slow.connectToServer());
        const qint64 cpuBefore = treeCpuMs(server->pid());
        QVERIFY(slow.sendRaw("GET /fib?n=" + QByteArray::number(n) + " HTTP/1.1\r\nHost: x\r\n\r\n"));
        QVERIFY2(waitForCpu(server->pid(), cpuBefore, kComputingCpuMs, 5000), "the slow request is not being computed");
        if (answered(*slow.socket())) {
            miss.answeredBefore = QStringLiteral("the signal");
            return;
        }
        QCOMPARE(::kill(-pid_t(server->pid()), signalNumber), 0);
        QElapsedTimer sinceSignal;
        sinceSignal.start();

        const QList<HttpResponse> answer = slow.readResponses(1);
        if (cutByTheGrace(answer, sinceSignal.elapsed(), kGraceMs, miss))
            return;
        QVERIFY2(answer.size() == 1 && answer[0].complete,
                 qPrintable(QStringLiteral("the request a worker was computing (n=%1) got no answer (%2), %3 ms after "
                                           "the signal; server stderr: %4")
                                .arg(n)
                                .arg(answer.value(0).error)
                                .arg(sinceSignal.elapsed())
                                .arg(QString::fromLocal8Bit(server->stderrText().right(1500)))));
        TC_VERIFY_STATUS(answer.value(0), 200);
        QVERIFY2(answer[0].body.contains("\"fib\""), answer[0].body.constData());
        QVERIFY2(server->waitForExit(kGraceMs + 2000), "the server did not exit");
        QCOMPARE(server->exitStatus(), QProcess::NormalExit);
        QVERIFY2(server->exitCode() == 0, server->stderrText().constData());
    });
}

// `nohup taxicore-server ...`: the operator asked for the server to outlive its terminal.
void GracefulShutdownTest::sighupIgnoredAtStartStaysIgnored()
{
    ServerProcess server({QStringLiteral("--cars"), QStringLiteral("10")});
    // Ignored here, so ignored in the child across fork and exec, as nohup leaves it.
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    struct sigaction previous {};
    QCOMPARE(::sigaction(SIGHUP, &ignore, &previous), 0);
    const bool started = server.start();
    ::sigaction(SIGHUP, &previous, nullptr);
    QVERIFY2(started, qPrintable(server.error()));
    QCOMPARE(::kill(pid_t(server.pid()), SIGHUP), 0);
    QVERIFY2(!server.waitForExit(1000), "a SIGHUP nohup ignored stopped the server");
    HttpClient http(server.host(), server.port(), 5000);
    TC_VERIFY_STATUS(http.get("/hello"), 200);
    QCOMPARE(server.stop(), 0);
}

void GracefulShutdownTest::signalWhileStartingStopsTheProcessAtOnce_data()
{
    QTest::addColumn<int>("signalNumber");
    QTest::addColumn<QByteArray>("named");
    QTest::newRow("SIGTERM") << int(SIGTERM) << QByteArray("SIGTERM");
    QTest::newRow("SIGINT") << int(SIGINT) << QByteArray("SIGINT");
    QTest::newRow("SIGHUP") << int(SIGHUP) << QByteArray("SIGHUP");
}

// A start that blocks (here on a city file that is a FIFO nobody writes; in life a slow disk or
// database) runs before the event loop that drains on a signal: the signal must still stop it.
void GracefulShutdownTest::signalWhileStartingStopsTheProcessAtOnce()
{
    QFETCH(int, signalNumber);
    QFETCH(QByteArray, named);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString fifo = dir.filePath(QStringLiteral("stuck.taxicity"));
    QVERIFY(::mkfifo(QFile::encodeName(fifo).constData(), 0600) == 0);
    QProcess server;
    server.start(ServerProcess::binary(), {QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--data-dir"),
                                           dir.filePath(QStringLiteral("data")), QStringLiteral("--city"), fifo});
    QVERIFY2(server.waitForStarted(5000), qPrintable(server.errorString()));
    const auto killer = qScopeGuard([&server] {
        if (server.state() != QProcess::NotRunning) {
            ::kill(pid_t(server.processId()), SIGKILL);
            server.waitForFinished(5000);
        }
    });
    // Signalled before its handler is in place, it would die of the default action without a
    // word, before its start began: that is not the case under test.
    const qint64 pid = server.processId();
    QVERIFY2(waitUntil([&] { return catchesSignal(pid, signalNumber); }, kHandlerInstalledMs),
             "no handler for the signal installed: " + server.readAllStandardError());
    QVERIFY2(!server.waitForFinished(kStuckInStartMs), "the server did not block on the FIFO: " + server.readAll());
    QCOMPARE(::kill(pid_t(server.processId()), signalNumber), 0);
    QVERIFY2(server.waitForFinished(kStopWhileStartingMs),
             qPrintable(QStringLiteral("still running %1 ms after %2 while starting")
                            .arg(kStopWhileStartingMs)
                            .arg(QLatin1StringView(named))));
    // It dies of the signal (a service manager counts that as a clean stop), saying so.
    QCOMPARE(server.exitStatus(), QProcess::CrashExit);
    QCOMPARE(server.exitCode(), signalNumber);
    const QByteArray err = server.readAllStandardError();
    QVERIFY2(err.contains(named) && err.contains("starting"), err.constData());
    QVERIFY2(!server.readAllStandardOutput().contains("listening on"), "it served");
}

void GracefulShutdownTest::portInUseExitsNonZeroWithAClearMessage()
{
    QTcpServer occupier;
    QVERIFY(occupier.listen(QHostAddress::LocalHost, 0));
    const QByteArray port = QByteArray::number(occupier.serverPort());
    const auto result = ServerProcess::run(
        {QStringLiteral("--port"), QString::fromLatin1(port), QStringLiteral("--cars"), QStringLiteral("10")});
    QVERIFY2(result.finished, "taxicore-server did not exit on a busy port");
    QVERIFY2(result.exitCode != 0, result.out.constData());
    QVERIFY2(!result.out.contains("listening on"), result.out.constData());
    QVERIFY2(result.err.contains(port), result.err.constData());
    const QByteArray lower = result.err.toLower();
    QVERIFY2(lower.contains("in use") || lower.contains("cannot listen") || lower.contains("address"),
             result.err.constData());
}

void GracefulShutdownTest::secondServerOnTheSamePortIsRefused_data()
{
    QTest::addColumn<QString>("firstHost");
    QTest::addColumn<QString>("secondHost");
    // Only loopback addresses listen; `::` is only the second server's, which must not start.
    QTest::newRow("127.0.0.1 after 127.0.0.1") << QStringLiteral("127.0.0.1") << QStringLiteral("127.0.0.1");
    QTest::newRow("::1 after ::1") << QStringLiteral("::1") << QStringLiteral("::1");
    QTest::newRow(":: after ::1") << QStringLiteral("::1") << QStringLiteral("::");
    QTest::newRow(":: after 127.0.0.1 (dual stack)") << QStringLiteral("127.0.0.1") << QStringLiteral("::");
}

// The listeners use SO_REUSEPORT (for the workers' clones), which would let a second server on
// the same port join and share the traffic: it must be refused as the kernel sees the conflict.
void GracefulShutdownTest::secondServerOnTheSamePortIsRefused()
{
    QFETCH(QString, firstHost);
    QFETCH(QString, secondHost);
    const bool ipv6 = firstHost.contains(u':') || secondHost.contains(u':');
    if (ipv6 && !canListenOnIpv6Loopback())
        QSKIP("this machine cannot listen on ::1 (no IPv6 loopback)");
    if (secondHost == QStringLiteral("::") && !firstHost.contains(u':') && !ipv6WildcardIsDualStack())
        QSKIP("net.ipv6.bindv6only is 1: `::` does not cover IPv4 here, so the kernel sees no conflict");
    ServerProcess first({QStringLiteral("--host"), firstHost, QStringLiteral("--cars"), QStringLiteral("10")});
    QVERIFY2(first.start(), qPrintable(first.error()));
    const QString port = QString::number(first.port());
    // Its own data directory: the data-directory lock must not be what refuses it.
    QTemporaryDir otherData;
    QVERIFY(otherData.isValid());
    const auto second = ServerProcess::run({QStringLiteral("--host"), secondHost, QStringLiteral("--port"), port,
                                            QStringLiteral("--cars"), QStringLiteral("10"),
                                            QStringLiteral("--data-dir"), otherData.path()},
                                           kRefusedStartWaitMs);
    QVERIFY2(second.finished, "a second server on the busy port started: " + second.out);
    QVERIFY2(second.exitCode == 1, second.err.constData());
    QVERIFY2(!second.out.contains("listening on"), second.out.constData());
    QVERIFY2(second.err.contains(port.toLatin1()), second.err.constData());
    QVERIFY2(second.err.contains("already in use"), second.err.constData());
    // The first one is undisturbed.
    HttpClient http(first.host(), first.port(), 5000);
    TC_VERIFY_STATUS(http.get("/hello"), 200);
    QCOMPARE(first.stop(), 0);
}

void GracefulShutdownTest::addressNotOnThisMachineIsNamedAsSuch_data()
{
    QTest::addColumn<QString>("port");
    // 192.0.2.1 is TEST-NET-1 (RFC 5737): no machine has it. A fixed port is checked before the
    // listeners are opened, port 0 when they are: both say why.
    QTest::newRow("fixed port") << QStringLiteral("38996");
    QTest::newRow("port 0") << QStringLiteral("0");
}

void GracefulShutdownTest::addressNotOnThisMachineIsNamedAsSuch()
{
    QFETCH(QString, port);
    QTemporaryDir data;
    QVERIFY(data.isValid());
    const auto result =
        ServerProcess::run({QStringLiteral("--host"), QStringLiteral("192.0.2.1"), QStringLiteral("--port"), port,
                            QStringLiteral("--cars"), QStringLiteral("10"), QStringLiteral("--data-dir"), data.path()},
                           kRefusedStartWaitMs);
    QVERIFY2(result.finished, "taxicore-server did not exit on an address this machine lacks");
    QVERIFY2(result.exitCode == 1, result.err.constData());
    QVERIFY2(result.err.contains("192.0.2.1"), result.err.constData());
    QVERIFY2(result.err.contains("not an address of this machine"), result.err.constData());
    QVERIFY2(!result.err.contains("in use"), result.err.constData());
}

void GracefulShutdownTest::lowPortAsAnUnprivilegedUserIsNamedAsPermissionDenied()
{
    constexpr int kLowPort = 1;
    if (firstUnprivilegedPort() <= kLowPort)
        QSKIP("net.ipv4.ip_unprivileged_port_start lets anyone bind port 1 here");
    // As root the server runs as `nobody` (dropped in the child before exec).
    const bool root = ::getuid() == 0;
    const passwd *nobody = root ? ::getpwnam("nobody") : nullptr;
    if (root && !nobody)
        QSKIP("running as root and there is no user `nobody` to drop to");
    const uid_t uid = nobody ? nobody->pw_uid : 0;
    const gid_t gid = nobody ? nobody->pw_gid : 0;
    QTemporaryDir data;
    QVERIFY(data.isValid());
    QVERIFY(QFile::setPermissions(data.path(), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner | QFile::ReadOther
                                                   | QFile::WriteOther | QFile::ExeOther));
    const auto result = ServerProcess::run(
        {QStringLiteral("--host"), QStringLiteral("127.0.0.1"), QStringLiteral("--port"), QString::number(kLowPort),
         QStringLiteral("--cars"), QStringLiteral("10"), QStringLiteral("--data-dir"), data.path()},
        kRefusedStartWaitMs, [root, uid, gid] {
            if (root && (::setgroups(0, nullptr) != 0 || ::setgid(gid) != 0 || ::setuid(uid) != 0))
                ::_exit(126);
        });
    QVERIFY2(result.finished, "taxicore-server did not exit on a port it may not bind");
    QVERIFY2(result.exitCode == 1, result.err.constData());
    QVERIFY2(result.err.contains("127.0.0.1:1"), result.err.constData());
    QVERIFY2(result.err.contains("permission denied"), result.err.constData());
    QVERIFY2(!result.err.contains("in use"), result.err.constData());
}

// std::thread throws std::system_error (EAGAIN) when the system makes no thread; uncaught, it
// aborted the server with "terminate called after throwing ...".
void GracefulShutdownTest::threadTheSystemRefusesIsAMessageNotAnAbort()
{
#if defined(__SANITIZE_ADDRESS__)
    QSKIP("AddressSanitizer reserves terabytes of shadow memory: it cannot start under an address-space limit");
#endif
    // How much fits varies from run to run (address-space layout, threads started by then): a
    // few tries, each given a moment (a start takes a fraction of a second).
    ServerProcess::RunResult result;
    for (int attempt = 0; attempt < kAddressSpaceAttempts; ++attempt) {
        QTemporaryDir data;
        QVERIFY(data.isValid());
        result = ServerProcess::run({QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--cars"),
                                     QStringLiteral("10"), QStringLiteral("--data-dir"), data.path()},
                                    kAddressSpaceAttemptMs, [] {
                                        const rlimit limit{kTooLittleAddressSpace, kTooLittleAddressSpace};
                                        ::setrlimit(RLIMIT_AS, &limit);
                                    });
        if (!result.out.contains("listening on"))
            break;
    }
    if (result.out.contains("listening on"))
        QSKIP("400 MB of address space were enough for the server each time: no thread was refused");
    QVERIFY2(result.finished, "the server died of a signal: " + result.err);
    QVERIFY2(result.exitCode == 1, QByteArray::number(result.exitCode) + ": " + result.err);
    QVERIFY2(result.err.contains("taxicore-server: cannot start: "), result.err.constData());
    QVERIFY2(result.err.contains("ulimit -v"), result.err.constData());
    QVERIFY2(!result.err.contains("terminate called"), result.err.constData());
}

void GracefulShutdownTest::badFlagExits2NamingTheFlag_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QByteArray>("named");
    QTest::newRow("--mode bogus") << QStringList{QStringLiteral("--mode"), QStringLiteral("bogus")}
                                  << QByteArray("--mode");
    QTest::newRow("--port 70000") << QStringList{QStringLiteral("--port"), QStringLiteral("70000")}
                                  << QByteArray("--port");
    QTest::newRow("--port abc") << QStringList{QStringLiteral("--port"), QStringLiteral("abc")} << QByteArray("--port");
    QTest::newRow("--cars -1") << QStringList{QStringLiteral("--cars"), QStringLiteral("-1")} << QByteArray("--cars");
    QTest::newRow("--sim-speed 0") << QStringList{QStringLiteral("--sim-speed"), QStringLiteral("0")}
                                   << QByteArray("--sim-speed");
    QTest::newRow("--sim-speed nan") << QStringList{QStringLiteral("--sim-speed"), QStringLiteral("nan")}
                                     << QByteArray("--sim-speed");
    QTest::newRow("--host nowhere") << QStringList{QStringLiteral("--host"), QStringLiteral("nowhere")}
                                    << QByteArray("--host");
    // An unknown flag and a stray word (a value whose flag was mistyped, a forgotten --) are bad
    // flags too: the server must not start without what the operator meant to say.
    QTest::newRow("unknown flag") << QStringList{QStringLiteral("--no-such-flag")} << QByteArray("no-such-flag");
    QTest::newRow("stray argument") << QStringList{QStringLiteral("--cars"), QStringLiteral("10"),
                                                   QStringLiteral("extra")}
                                    << QByteArray("unexpected argument \"extra\"");
    QTest::newRow("stray argument after --")
        << QStringList{QStringLiteral("--"), QStringLiteral("--cars")} << QByteArray("unexpected argument \"--cars\"");
}

void GracefulShutdownTest::badFlagExits2NamingTheFlag()
{
    QFETCH(QStringList, args);
    QFETCH(QByteArray, named);
    // Were a bad command line to start a server, it would serve on a free port from a scratch directory.
    QTemporaryDir data;
    QVERIFY(data.isValid());
    const auto result = ServerProcess::run(
        QStringList{QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--data-dir"), data.path()} + args,
        kRefusedStartWaitMs);
    QVERIFY2(result.finished, "taxicore-server did not exit on a bad flag");
    QVERIFY2(
        result.exitCode == 2,
        qPrintable(
            QStringLiteral("exit code %1, stderr: %2").arg(result.exitCode).arg(QString::fromLocal8Bit(result.err))));
    QVERIFY2(result.err.contains(named), result.err.constData());
    QVERIFY2(!result.out.contains("listening on"), result.out.constData());
}

void GracefulShutdownTest::versionPrintsTheVersion()
{
    const auto result = ServerProcess::run({QStringLiteral("--version")});
    QVERIFY(result.finished);
    QCOMPARE(result.exitCode, 0);
    QVERIFY2(result.out.contains(TAXICORE_VERSION), result.out.constData());
    QVERIFY(!result.out.contains("listening on"));
}

QTEST_GUILESS_MAIN(GracefulShutdownTest)
#include "server_graceful_shutdown_test.moc"
