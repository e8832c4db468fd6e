// Slowloris and idle keep-alive connections against a real taxicore-server, in single and
// processes mode: 500 clients trickle a request head one byte per second (half of them the
// request line itself, half the headers after a whole request line) while ordinary /hello
// requests keep being answered quickly, and the header timeout closes every slow client; idle
// keep-alive connections are closed by the idle timeout while an active one is kept.

#include "RawSocket.h"
#include "ServingKit.h"

#include <QElapsedTimer>
#include <QTest>
#include <algorithm>
#include <limits>
#include <poll.h>
#include <unistd.h>
#include <utility>
#include <vector>

using namespace taxicore::test;

namespace {

constexpr int kSlowClients = 500;
constexpr int kIdleClients = 100;
constexpr int kHeaderTimeoutMs = 3000;
constexpr int kIdleTimeoutMs = 2000;
constexpr int kSweepSlackMs = 3000; // the guard sweeps every 500 ms; a loaded machine is late
constexpr int kProbeIntervalMs = 150;
constexpr qint64 kProbeMaxLatencyMs = 2000; // any single /hello, on a shared 2-core machine
constexpr qint64 kProbeMedianLatencyMs = 250;

// Fresh-connection /hello requests at a steady pace; each one's latency, and the failures.
class HelloProbe {
public:
    explicit HelloProbe(quint16 port)
        : m_port(port)
    {
        m_sincePrevious.start();
    }

    void probeIfDue()
    {
        if (m_sincePrevious.elapsed() < kProbeIntervalMs && !m_latenciesMs.empty())
            return;
        m_sincePrevious.restart();
        HttpClient client(QStringLiteral("127.0.0.1"), m_port, int(kProbeMaxLatencyMs) * 2);
        QElapsedTimer timer;
        timer.start();
        const HttpResponse response = client.get("/hello");
        m_latenciesMs.push_back(timer.elapsed());
        if (!response.complete || response.status != 200 || response.body != "Hello World\n")
            m_failures.append(response.describe());
    }

    const std::vector<qint64> &latenciesMs() const { return m_latenciesMs; }
    const QByteArrayList &failures() const { return m_failures; }

private:
    quint16 m_port;
    QElapsedTimer m_sincePrevious;
    std::vector<qint64> m_latenciesMs;
    QByteArrayList m_failures;
};

void verifyProbes(const HelloProbe &probe, const char *what)
{
    const std::vector<qint64> &latencies = probe.latenciesMs();
    QVERIFY2(latencies.size() >= 5, "too few /hello probes ran");
    QVERIFY2(probe.failures().isEmpty(), qPrintable(QStringLiteral("%1 of %2 /hello requests failed, first: %3")
                                                        .arg(probe.failures().size())
                                                        .arg(latencies.size())
                                                        .arg(QString::fromUtf8(probe.failures().value(0)))));
    const qint64 p50 = percentile(latencies, 0.50);
    const qint64 max = *std::max_element(latencies.begin(), latencies.end());
    qInfo("%s: %zu /hello requests, p50 %lld ms, p99 %lld ms, max %lld ms", what, latencies.size(),
          static_cast<long long>(p50), static_cast<long long>(percentile(latencies, 0.99)),
          static_cast<long long>(max));
    QVERIFY2(max < kProbeMaxLatencyMs, qPrintable(QStringLiteral("slowest /hello took %1 ms").arg(max)));
    QVERIFY2(p50 < kProbeMedianLatencyMs, qPrintable(QStringLiteral("median /hello took %1 ms").arg(p50)));
}

QStringList serverArgs(const QString &mode)
{
    return {QStringLiteral("--mode"),
            mode,
            QStringLiteral("--workers"),
            QStringLiteral("2"),
            QStringLiteral("--cars"),
            QStringLiteral("50"),
            QStringLiteral("--header-timeout-ms"),
            QString::number(kHeaderTimeoutMs),
            QStringLiteral("--idle-timeout-ms"),
            QString::number(kIdleTimeoutMs)};
}

struct OpenSocket {
    int fd = -1;
    qint64 openedAtMs = 0; // when its first byte went out (slow) or its answer came (idle)
    qint64 closedAtMs = -1;
};

void closeAll(std::vector<OpenSocket> &sockets)
{
    for (OpenSocket &s : sockets)
        if (s.fd >= 0)
            ::close(s.fd);
    sockets.clear();
}

// Polls every still-open socket once; stamps the ones the server closed. Returns how many are open.
int reapClosed(std::vector<OpenSocket> &sockets, qint64 nowMs)
{
    std::vector<pollfd> fds;
    std::vector<OpenSocket *> owners;
    for (OpenSocket &s : sockets) {
        if (s.closedAtMs < 0) {
            fds.push_back({s.fd, POLLIN, 0});
            owners.push_back(&s);
        }
    }
    if (fds.empty())
        return 0;
    ::poll(fds.data(), nfds_t(fds.size()), 0);
    int open = 0;
    for (size_t i = 0; i < fds.size(); ++i) {
        if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) && peerClosed(fds[i].fd))
            owners[i]->closedAtMs = nowMs;
        else
            ++open;
    }
    return open;
}

// The shortest and the longest time from opening to the server's close, over the closed sockets.
std::pair<qint64, qint64> closedAfter(const std::vector<OpenSocket> &sockets)
{
    qint64 earliest = std::numeric_limits<qint64>::max();
    qint64 latest = 0;
    for (const OpenSocket &s : sockets) {
        if (s.closedAtMs >= 0) {
            earliest = std::min(earliest, s.closedAtMs - s.openedAtMs);
            latest = std::max(latest, s.closedAtMs - s.openedAtMs);
        }
    }
    return {earliest, latest};
}

} // namespace

class SlowlorisTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void slowHeadsAreClosedWhileHelloIsServed_data();
    void slowHeadsAreClosedWhileHelloIsServed();
    void idleKeepAliveConnectionsAreClosed_data();
    void idleKeepAliveConnectionsAreClosed();
    void slowBodiesAreClosed_data();
    void slowBodiesAreClosed();
};

void SlowlorisTest::slowHeadsAreClosedWhileHelloIsServed_data()
{
    QTest::addColumn<QString>("mode");
    QTest::newRow("single") << QStringLiteral("single");
    QTest::newRow("processes") << QStringLiteral("processes");
}

void SlowlorisTest::slowHeadsAreClosedWhileHelloIsServed()
{
    QFETCH(QString, mode);
    ServerProcess server(serverArgs(mode));
    QString error;
    QVERIFY2(startServing(server, mode, error), qPrintable(error));

    // Half trickle the request line (it never ends), half trickle headers after a whole one.
    const QByteArray slowLine = "GET /hello?" + QByteArray(4096, 'a') + " HTTP/1.1\r\n";
    const QByteArray slowHeaders = "X-Slow: " + QByteArray(4096, 'b');
    std::vector<OpenSocket> sockets;
    sockets.reserve(kSlowClients);
    QElapsedTimer clock;
    clock.start();
    for (int i = 0; i < kSlowClients; ++i) {
        const int fd = connectRaw(server.port());
        if (fd < 0) {
            closeAll(sockets);
            QFAIL(qPrintable(QStringLiteral("connection %1 failed: %2").arg(i).arg(qt_error_string(errno))));
        }
        const bool lineTrickler = i % 2 == 0;
        sockets.push_back({fd, clock.elapsed(), -1});
        sendAll(fd, lineTrickler ? slowLine.left(1) : "GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\nX");
    }

    HelloProbe probe(server.port());
    int sent = 1;
    qint64 nextTickMs = 1000;
    const qint64 deadlineMs = clock.elapsed() + kHeaderTimeoutMs + kSweepSlackMs + 1000;
    int open = kSlowClients;
    while (open > 0 && clock.elapsed() < deadlineMs) {
        if (clock.elapsed() >= nextTickMs) { // one more byte from every slow client still open
            for (size_t i = 0; i < sockets.size(); ++i)
                if (sockets[i].closedAtMs < 0)
                    sendAll(sockets[i].fd, (i % 2 == 0 ? slowLine : slowHeaders).mid(sent, 1));
            ++sent;
            nextTickMs += 1000;
        }
        open = reapClosed(sockets, clock.elapsed());
        probe.probeIfDue();
        QTest::qWait(20);
    }
    // A few more probes once the slow clients are gone: the server is back to normal.
    for (int i = 0; i < 5; ++i) {
        QTest::qWait(kProbeIntervalMs);
        probe.probeIfDue();
    }

    const auto [earliest, latest] = closedAfter(sockets);
    closeAll(sockets);
    qInfo("%s: %d slow clients, %d still open, closed after %lld..%lld ms (header timeout %d ms)", qPrintable(mode),
          kSlowClients, open, static_cast<long long>(earliest), static_cast<long long>(latest), kHeaderTimeoutMs);
    QVERIFY2(open == 0, qPrintable(QStringLiteral("%1 slow clients were never closed").arg(open)));
    // Closed by the header timeout: not before it (they were sending all along), soon after it.
    QVERIFY2(earliest >= kHeaderTimeoutMs - 300, qPrintable(QStringLiteral("one closed after %1 ms").arg(earliest)));
    QVERIFY2(latest <= kHeaderTimeoutMs + kSweepSlackMs,
             qPrintable(QStringLiteral("one closed after %1 ms").arg(latest)));
    verifyProbes(probe, qPrintable(mode));
    QVERIFY2(server.isRunning(), server.stderrText().constData());
}

void SlowlorisTest::idleKeepAliveConnectionsAreClosed_data()
{
    slowHeadsAreClosedWhileHelloIsServed_data();
}

void SlowlorisTest::idleKeepAliveConnectionsAreClosed()
{
    QFETCH(QString, mode);
    ServerProcess server(serverArgs(mode));
    QString error;
    QVERIFY2(startServing(server, mode, error), qPrintable(error));

    // Each idle client makes one keep-alive request, reads the whole answer, then stays silent.
    std::vector<OpenSocket> sockets;
    QElapsedTimer clock;
    clock.start();
    for (int i = 0; i < kIdleClients; ++i) {
        const int fd = connectRaw(server.port());
        QVERIFY2(fd >= 0, qPrintable(qt_error_string(errno)));
        sockets.push_back({fd, -1, -1});
        QVERIFY(sendAll(fd, "GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
    }
    QByteArrayList buffers(kIdleClients);
    int answered = 0;
    while (answered < kIdleClients && clock.elapsed() < 10'000) {
        for (int i = 0; i < kIdleClients; ++i) {
            if (sockets[size_t(i)].openedAtMs >= 0)
                continue;
            char buffer[1024];
            const ssize_t n = ::recv(sockets[size_t(i)].fd, buffer, sizeof buffer, 0);
            if (n > 0)
                buffers[i].append(buffer, int(n));
            if (buffers[i].endsWith("Hello World\n")) {
                sockets[size_t(i)].openedAtMs = clock.elapsed();
                ++answered;
            }
        }
        QTest::qWait(5);
    }
    if (answered < kIdleClients) {
        closeAll(sockets);
        QFAIL(
            qPrintable(QStringLiteral("only %1 of %2 idle clients got their answer").arg(answered).arg(kIdleClients)));
    }

    // An active keep-alive client, meanwhile, keeps its one connection well past the idle timeout.
    HttpClient active(QStringLiteral("127.0.0.1"), server.port());
    const qint64 deadlineMs = clock.elapsed() + kIdleTimeoutMs + kSweepSlackMs + 1000;
    int open = kIdleClients;
    int activeRequests = 0;
    QElapsedTimer sinceActive;
    sinceActive.start();
    while ((open > 0 || clock.elapsed() < kIdleTimeoutMs * 2) && clock.elapsed() < deadlineMs) {
        open = reapClosed(sockets, clock.elapsed());
        if (activeRequests == 0 || sinceActive.elapsed() >= kIdleTimeoutMs / 3) {
            sinceActive.restart();
            const HttpResponse response = active.get("/hello");
            ++activeRequests;
            if (response.status != 200) {
                closeAll(sockets);
                QFAIL(response.describe().constData());
            }
        }
        QTest::qWait(20);
    }
    const auto [earliest, latest] = closedAfter(sockets);
    closeAll(sockets);
    qInfo("%s: %d idle clients closed after %lld..%lld ms (idle timeout %d ms); the active one made %d "
          "requests over %d connection(s)",
          qPrintable(mode), kIdleClients - open, static_cast<long long>(earliest), static_cast<long long>(latest),
          kIdleTimeoutMs, activeRequests, active.connections());
    QVERIFY2(open == 0, qPrintable(QStringLiteral("%1 idle connections were never closed").arg(open)));
    // The server's idle clock starts when the request arrived, a little before the client saw
    // the answer (later still on a loaded machine): half the timeout is margin enough.
    QVERIFY2(earliest >= kIdleTimeoutMs / 2, qPrintable(QStringLiteral("one closed after %1 ms").arg(earliest)));
    QVERIFY2(latest <= kIdleTimeoutMs + kSweepSlackMs,
             qPrintable(QStringLiteral("one closed after %1 ms").arg(latest)));
    QCOMPARE(active.connections(), 1);
}

void SlowlorisTest::slowBodiesAreClosed_data()
{
    slowHeadsAreClosedWhileHelloIsServed_data();
}

// A whole head, then its body one byte per second (inside the idle timeout, so only the body's
// own deadline can end it): closed once the header timeout passed again after the head. Before,
// such a connection stayed open for good, and twenty of them filled --max-connections 20.
void SlowlorisTest::slowBodiesAreClosed()
{
    QFETCH(QString, mode);
    constexpr int kSlowBodies = 20;
    ServerProcess server(serverArgs(mode));
    QString error;
    QVERIFY2(startServing(server, mode, error), qPrintable(error));
    const QByteArray head = "POST /api/v1/bookings HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                            "Content-Length: 1000\r\n\r\n";
    std::vector<OpenSocket> sockets;
    QElapsedTimer clock;
    clock.start();
    for (int i = 0; i < kSlowBodies; ++i) {
        const int fd = connectRaw(server.port());
        if (fd < 0) {
            closeAll(sockets);
            QFAIL(qPrintable(QStringLiteral("connection %1 failed: %2").arg(i).arg(qt_error_string(errno))));
        }
        sendAll(fd, head + " ");
        sockets.push_back({fd, clock.elapsed(), -1});
    }
    qint64 nextTickMs = 1000;
    const qint64 deadlineMs = clock.elapsed() + kHeaderTimeoutMs + kSweepSlackMs + 1000;
    int open = kSlowBodies;
    while (open > 0 && clock.elapsed() < deadlineMs) {
        if (clock.elapsed() >= nextTickMs) {
            for (OpenSocket &s : sockets)
                if (s.closedAtMs < 0)
                    sendAll(s.fd, " ");
            nextTickMs += 1000;
        }
        open = reapClosed(sockets, clock.elapsed());
        QTest::qWait(20);
    }
    const auto [earliest, latest] = closedAfter(sockets);
    closeAll(sockets);
    qInfo("%s: %d slow bodies, %d still open, closed after %lld..%lld ms (header timeout %d ms)", qPrintable(mode),
          kSlowBodies, open, static_cast<long long>(earliest), static_cast<long long>(latest), kHeaderTimeoutMs);
    QVERIFY2(open == 0, qPrintable(QStringLiteral("%1 slow bodies were never closed").arg(open)));
    QVERIFY2(earliest >= kHeaderTimeoutMs - 300, qPrintable(QStringLiteral("one closed after %1 ms").arg(earliest)));
    QVERIFY2(server.isRunning(), server.stderrText().constData());
}

QTEST_GUILESS_MAIN(SlowlorisTest)
#include "hardening_slowloris_test.moc"
