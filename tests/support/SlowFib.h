#pragma once

// A slow request as a test's precondition: GET /fib?n=<n> (the server's deliberately naive
// recursion) still being computed while the test does what it checks. How long fib(n) takes
// depends on the machine and on its load at that moment, so any fixed n is too short somewhere:
// the answer comes before the test has done its part, and the test fails on the machine's speed
// instead of the behaviour it names. Here: an n estimated for the time wanted (fibTaking), and
// withSlowFib, which runs an attempt again with a slower request when the attempt reports that
// its request was answered too early, or a faster one when it had to be answered by some time
// and was not (bounded: the server's largest n, a few attempts). An attempt checks `answered`
// before each step that needs the request in flight: answered before the step, the precondition
// failed; answered after it, the step itself is to blame where that is what the test asserts (a
// client that waited behind the request). Include after <QTest>.

#include "RuntimeKit.h"

#include <QElapsedTimer>
#include <QTcpSocket>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <poll.h>

namespace taxicore::test {

// The server's bound on /fib's n (server/http/WorkloadApi.cpp).
inline constexpr int kMaxFib = 45;
// fib(n) costs ~1.618 times fib(n - 1).
inline constexpr double kFibRatio = 1.618;
// An attempt answered too early is run again with n + 2 (~2.6 times the work); one that had to be
// answered by some time and was not (a test with an upper bound too), with n - 1.
inline constexpr int kSlowFibStep = 2;
// Attempts in all: from the first n, up to ~47 times its work (within the server's bound).
inline constexpr int kSlowFibAttempts = 5;

// The /fib argument that takes about `wantedMs` on `server` now. The probe is timed in
// microseconds and made to take some tens of ms: a few ms of CPU right after a wake-up run at
// full speed even on a loaded machine, where a long computation gets only its share of a core
// (fib(32) timed in whole ms once sized fib(45), 2.2 s idle, for 1.2 s, and on a loaded machine
// it outlasted the drain test's 5 s grace).
inline int fibTaking(const ServerProcess &server, int wantedMs)
{
    constexpr double kProbeMinMs = 50;
    int probe = 30; // ~2 ms here
    double probeMs = 0;
    for (;;) {
        QElapsedTimer timer;
        timer.start();
        rt::call(server, "GET", "/fib?n=" + QByteArray::number(probe));
        probeMs = std::max(0.01, double(timer.nsecsElapsed()) / 1e6);
        if (probeMs >= kProbeMinMs || probe == kMaxFib)
            break;
        const int steps = int(std::ceil(std::log(kProbeMinMs / probeMs) / std::log(kFibRatio)));
        probe = std::min(probe + std::clamp(steps, 1, 6), kMaxFib);
    }
    const int n = probe + int(std::lround(std::log(wantedMs / probeMs) / std::log(kFibRatio)));
    return std::clamp(n, 20, kMaxFib);
}

// True once the server sent anything on `fd` or closed it (the slow request's answer has begun).
inline bool answered(int fd)
{
    pollfd p{fd, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
}

// The same for a QTcpSocket: what Qt has read already, or what waits in the kernel.
inline bool answered(const QTcpSocket &socket)
{
    return socket.bytesAvailable() > 0 || answered(int(socket.socketDescriptor()));
}

// What an attempt says about its slow request when its precondition failed; both empty: it held
// (whatever the attempt then asserted).
struct SlowFibMiss {
    QString answeredBefore; // too fast: the step that needed it in flight ("client 3 of 10 was sent")
    QString unansweredBy;   // too slow: the bound it had to be answered by ("the 5 s grace ended")
};

// True, and noted in `miss`, when the slow request's answer is missing because the server cut it
// once its grace (`graceMs`) ended, `elapsedMs` after the signal: the request outlasted the grace
// (too slow for this run), which the server is right to cut. Closed earlier, or answered: false.
inline bool cutByTheGrace(const QList<HttpResponse> &answers, qint64 elapsedMs, int graceMs, SlowFibMiss &miss)
{
    if ((answers.size() == 1 && answers[0].complete) || elapsedMs < graceMs
        || !answers.value(0).error.startsWith(QStringLiteral("connection closed"))) // HttpClient's wording
        return false;
    miss.unansweredBy = QStringLiteral("the %1 ms grace ended").arg(graceMs);
    return true;
}

// Runs `attempt(n, miss)` (a void function: QVERIFY works inside) with n = firstN; an attempt
// whose precondition failed says how in `miss` and ends. Then it runs again with n raised by
// kSlowFibStep (answered too early) or lowered by one (not answered in time), within the server's
// bound, kSlowFibAttempts times in all. Returns the n of the attempt whose precondition held, or
// 0: an attempt failed a check (QTest::currentTestFailed()), or no attempt's precondition held
// (reported as a failure here: the test could not check what it names).
template <typename Attempt> int withSlowFib(int firstN, Attempt &&attempt)
{
    int n = std::clamp(firstN, 1, kMaxFib);
    for (int tries = 1;; ++tries) {
        SlowFibMiss miss;
        attempt(n, miss);
        if (QTest::currentTestFailed())
            return 0;
        if (miss.answeredBefore.isEmpty() && miss.unansweredBy.isEmpty())
            return n;
        const QString what = miss.answeredBefore.isEmpty()
                                 ? QStringLiteral("was not answered by the time %1").arg(miss.unansweredBy)
                                 : QStringLiteral("was answered before %1").arg(miss.answeredBefore);
        if (tries == kSlowFibAttempts) {
            QTest::qFail(qPrintable(QStringLiteral("the test's precondition never held in %1 attempts (n from %2): "
                                                   "the last slow request, GET /fib?n=%3, %4")
                                        .arg(kSlowFibAttempts)
                                        .arg(firstN)
                                        .arg(n)
                                        .arg(what)),
                         __FILE__, __LINE__);
            return 0;
        }
        const int next = miss.answeredBefore.isEmpty() ? std::max(1, n - 1) : std::min(n + kSlowFibStep, kMaxFib);
        qInfo("precondition not met: GET /fib?n=%d %s; again with n=%d (attempt %d of %d)", n, qPrintable(what), next,
              tries + 1, kSlowFibAttempts);
        n = next;
    }
}

} // namespace taxicore::test
