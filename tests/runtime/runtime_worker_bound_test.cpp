// The per-worker bound of processes mode (--worker-connections) and the primary's waiting queue:
// - with a bound of 2 and two workers, four kept-alive connections fill both (GET /admin/v1/workers
//   counts 2 each); two more clients wait unanswered, and as held connections close they are
//   served oldest first; one that waits longer than kMaxConnectionWaitMs is answered by the
//   primary itself (never left hanging);
// - a burst of many concurrent slow requests (/fib, Connection: close) far over the bound is
//   answered in full, none timing out, in processes mode (least-loaded) and in pool mode.

#include "HttpBatch.h"
#include "RawSocket.h"
#include "RuntimeKit.h"
#include "region/WorkerProtocol.h"

#include <QElapsedTimer>
#include <QScopeGuard>
#include <poll.h>
#include <vector>

using namespace taxicore;
using namespace taxicore::test;
using namespace taxicore::test::rt;

namespace {
constexpr int kBound = 2;
constexpr int kAnswerTimeoutMs = 30'000;
// A client that keeps waiting must still be unanswered this long after the last change.
constexpr int kStillWaitingMs = 300;
constexpr int kBurst = 200;
constexpr int kBurstTimeoutMs = 180'000;

const QByteArray kHello = "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n";

bool hasInput(int fd, int timeoutMs)
{
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, timeoutMs) > 0;
}

// Reads one small response from `fd` (a /hello answer fits in one segment on loopback); its
// status line, or empty when nothing came within `timeoutMs`.
QByteArray readStatus(int fd, int timeoutMs)
{
    if (!hasInput(fd, timeoutMs))
        return {};
    char buffer[4096];
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0)
        return {};
    const QByteArray text(buffer, qsizetype(n));
    return text.left(text.indexOf("\r\n"));
}

struct Held {
    std::vector<int> fds;
    ~Held()
    {
        for (int fd : fds)
            if (fd >= 0)
                ::close(fd);
    }
    void close(std::size_t i)
    {
        ::close(fds[i]);
        fds[i] = -1;
    }
};
} // namespace

class WorkerBoundTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void boundHonouredWaitingServedOldestFirst();
    void burstOfSlowRequestsAllAnswered_data();
    void burstOfSlowRequestsAllAnswered();
};

void WorkerBoundTest::boundHonouredWaitingServedOldestFirst()
{
    ServerProcess server({QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"),
                          QStringLiteral("2"), QStringLiteral("--policy"), QStringLiteral("least-loaded"),
                          QStringLiteral("--worker-connections"), QString::number(kBound), QStringLiteral("--cars"),
                          QStringLiteral("50"), QStringLiteral("--sim-speed"), QStringLiteral("0.001")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    QVERIFY2(waitForWorkersTakingConnections(server, 2, 20'000), qPrintable(describeEvents(server)));

    Held held;
    const auto hold = [&] {
        const int fd = connectRaw(server.port());
        held.fds.push_back(fd);
        return fd >= 0 && sendAll(fd, kHello) && readStatus(fd, kAnswerTimeoutMs) == "HTTP/1.1 200 OK";
    };
    for (int i = 0; i < 2 * kBound - 1; ++i)
        QVERIFY2(hold(), "a held connection was not served");
    // Three held: the admin call takes the last place, and both workers are at the bound.
    QVERIFY2(waitUntil(
                 [&] {
                     const QList<WorkerInfo> all = serving(server);
                     return all.size() == 2 && all[0].openConnections == kBound && all[1].openConnections == kBound;
                 },
                 10'000),
             "the workers do not hold 2 connections each");
    QVERIFY2(hold(), "the fourth held connection was not served");

    // Every worker is at its bound: these two wait in the primary's queue, A before B.
    const int a = connectRaw(server.port());
    QVERIFY(a >= 0 && sendAll(a, kHello));
    auto closeA = qScopeGuard([a] { ::close(a); });
    QTest::qWait(100); // the primary takes A before B is even connected
    const int b = connectRaw(server.port());
    QVERIFY(b >= 0 && sendAll(b, kHello));
    const auto closeB = qScopeGuard([b] { ::close(b); });
    QVERIFY2(!hasInput(a, kStillWaitingMs) && !hasInput(b, 0), "a client was served past the workers' bound");

    held.close(0); // room for one: the oldest waiting client, A
    QCOMPARE(readStatus(a, kAnswerTimeoutMs), QByteArray("HTTP/1.1 200 OK"));
    QVERIFY2(!hasInput(b, kStillWaitingMs), "B was served while no worker had room");
    held.close(1);
    QCOMPARE(readStatus(b, kAnswerTimeoutMs), QByteArray("HTTP/1.1 200 OK"));

    // Full again (held 2 and 3, A and B): C waits, and after kMaxConnectionWaitMs the primary's
    // own server answers it (and closes) rather than leave it hanging.
    const int c = connectRaw(server.port());
    QVERIFY(c >= 0 && sendAll(c, kHello));
    const auto closeC = qScopeGuard([c] { ::close(c); });
    QElapsedTimer waited;
    waited.start();
    QCOMPARE(readStatus(c, kMaxConnectionWaitMs + kAnswerTimeoutMs), QByteArray("HTTP/1.1 200 OK"));
    QVERIFY2(
        waited.elapsed() >= kMaxConnectionWaitMs - 500,
        qPrintable(QStringLiteral("C was answered after %1 ms, with every worker at its bound").arg(waited.elapsed())));

    closeA.dismiss();
    ::close(a); // room for the admin call below
    QVERIFY2(waitUntil(
                 [&] {
                     const QList<WorkerInfo> all = serving(server);
                     qint64 total = 0;
                     for (const WorkerInfo &w : all) {
                         if (w.openConnections > kBound)
                             return false;
                         total += w.openConnections;
                     }
                     return all.size() == 2 && total == 2 * kBound; // held 2 and 3, B, this call
                 },
                 10'000),
             "a worker holds more connections than its bound");
}

void WorkerBoundTest::burstOfSlowRequestsAllAnswered_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::newRow("processes least-loaded, bound 8") << QStringList{QStringLiteral("--mode"),
                                                                    QStringLiteral("processes"),
                                                                    QStringLiteral("--workers"),
                                                                    QStringLiteral("2"),
                                                                    QStringLiteral("--policy"),
                                                                    QStringLiteral("least-loaded"),
                                                                    QStringLiteral("--worker-connections"),
                                                                    QStringLiteral("8")};
    QTest::newRow("pool") << QStringList{QStringLiteral("--mode"), QStringLiteral("pool"), QStringLiteral("--threads"),
                                         QStringLiteral("2")};
}

void WorkerBoundTest::burstOfSlowRequestsAllAnswered()
{
    QFETCH(QStringList, args);
    ServerProcess server(args
                         + QStringList{QStringLiteral("--cars"), QStringLiteral("50"), QStringLiteral("--sim-speed"),
                                       QStringLiteral("0.001")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    if (args.contains(QStringLiteral("processes")))
        QVERIFY2(waitForWorkersTakingConnections(server, 2, 20'000), qPrintable(describeEvents(server)));

    const QList<QByteArray> requests(kBurst, "GET /fib?n=27 HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
    QElapsedTimer clock;
    clock.start();
    const QList<HttpResponse> responses = sendConcurrently(server.host(), server.port(), requests, kBurstTimeoutMs);
    QCOMPARE(responses.size(), qsizetype(kBurst));
    int answered = 0;
    for (const HttpResponse &r : responses) {
        QVERIFY2(r.complete && r.status == 200, r.describe().constData());
        ++answered;
    }
    QCOMPARE(answered, kBurst);
    qInfo("%d concurrent /fib?n=27 answered in %lld ms", kBurst, clock.elapsed());
    QVERIFY2(server.isRunning(), server.stderrText().constData());
}

QTEST_GUILESS_MAIN(WorkerBoundTest)
#include "runtime_worker_bound_test.moc"
