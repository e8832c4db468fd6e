// C10K: 10,000 keep-alive HTTP connections held open on a real taxicore-server (single mode, and
// processes mode with 2 workers), each having made one real request; while they are held, a
// separate client's /hello requests must all succeed, and their p50/p99 are reported. The held
// connections are driven by raw non-blocking sockets and one epoll set, not 10k QTcpSockets.

#include "ServingKit.h"
#include "runtime/FileLimit.h"

#include <QElapsedTimer>
#include <QTest>
#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

using namespace taxicore::test;

namespace {

constexpr int kHeld = 10'000;
constexpr int kInProgress = 256;         // connections connecting or awaiting their answer at once
constexpr long long kFdsNeeded = 10'300; // the held sockets, the probe, Qt's own descriptors
constexpr int kOpenDeadlineMs = 30'000;
constexpr int kProbes = 200;
constexpr qint64 kProbeMaxLatencyMs = 2000;
const QByteArray kHelloRequest = "GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

// Many client connections on one epoll set. Each connects without blocking, sends one /hello,
// reads its whole answer (ResponseParser, as the other tests do) and is then held open.
class HeldConnections {
public:
    explicit HeldConnections(quint16 port)
        : m_port(port)
        , m_epoll(::epoll_create1(EPOLL_CLOEXEC))
    {
    }
    ~HeldConnections()
    {
        for (const Connection &c : m_connections)
            if (c.fd >= 0)
                ::close(c.fd);
        ::close(m_epoll);
    }

    // Opens connections until `count` are held, at most `deadlineMs`; false with `error` if not.
    bool open(int count, int deadlineMs, QString &error)
    {
        QElapsedTimer clock;
        clock.start();
        m_connections.reserve(size_t(count));
        while (m_held < count) {
            while (int(m_connections.size()) < count && int(m_connections.size()) - m_held - m_failed < kInProgress)
                if (!startOne(error))
                    return false;
            if (m_failed > 0) {
                error = QStringLiteral("%1 connections failed: %2").arg(m_failed).arg(m_firstFailure);
                return false;
            }
            if (clock.elapsed() > deadlineMs) {
                error =
                    QStringLiteral("only %1 of %2 connections held after %3 ms").arg(m_held).arg(count).arg(deadlineMs);
                return false;
            }
            pump(50);
        }
        return true;
    }

    // Sends one more request over `count` of the held connections (spread over all of them) and
    // reads every answer: they are live HTTP connections, not just open descriptors.
    bool reuse(int count, int deadlineMs, QString &error)
    {
        const int stride = std::max(1, int(m_connections.size()) / count);
        const int before = m_held;
        for (size_t i = 0; i < m_connections.size() && count > 0; i += size_t(stride), --count) {
            Connection &c = m_connections[i];
            c.state = State::Awaiting;
            --m_held;
            if (!sendRequest(c))
                fail(c, QStringLiteral("send: %1").arg(qt_error_string(errno)));
        }
        QElapsedTimer clock;
        clock.start();
        while (m_held < before && m_failed == 0 && clock.elapsed() < deadlineMs)
            pump(50);
        if (m_held < before)
            error = QStringLiteral("%1 reused connections did not answer (%2 failed: %3)")
                        .arg(before - m_held)
                        .arg(m_failed)
                        .arg(m_firstFailure);
        return m_held == before;
    }

    // How many held connections the server has closed (or reset) so far, without blocking.
    int closedByServer()
    {
        pump(0);
        return m_failed;
    }

    int held() const { return m_held; }

private:
    enum class State { Connecting, Awaiting, Held, Failed };
    struct Connection {
        int fd = -1;
        State state = State::Connecting;
        QByteArray buffer;
    };

    bool startOne(QString &error)
    {
        const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            error = QStringLiteral("socket() after %1 connections: %2")
                        .arg(m_connections.size())
                        .arg(qt_error_string(errno));
            return false;
        }
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(m_port);
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        m_connections.push_back({fd, State::Connecting, {}});
        const size_t index = m_connections.size() - 1;
        if (::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0 && errno != EINPROGRESS) {
            fail(m_connections[index], QStringLiteral("connect: %1").arg(qt_error_string(errno)));
            return true;
        }
        epoll_event event{};
        event.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP;
        event.data.u64 = index;
        ::epoll_ctl(m_epoll, EPOLL_CTL_ADD, fd, &event);
        return true;
    }

    static bool sendRequest(const Connection &c)
    {
        return ::send(c.fd, kHelloRequest.constData(), size_t(kHelloRequest.size()), MSG_NOSIGNAL)
               == kHelloRequest.size();
    }

    void fail(Connection &c, const QString &why)
    {
        if (c.state == State::Held)
            --m_held;
        c.state = State::Failed;
        if (m_failed++ == 0)
            m_firstFailure = why;
    }

    void pump(int timeoutMs)
    {
        epoll_event events[512];
        const int n = ::epoll_wait(m_epoll, events, 512, timeoutMs);
        for (int i = 0; i < n; ++i) {
            Connection &c = m_connections[size_t(events[i].data.u64)];
            if (c.state == State::Failed)
                continue;
            if (c.state == State::Connecting && (events[i].events & EPOLLOUT)) {
                int soError = 0;
                socklen_t length = sizeof soError;
                ::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &soError, &length);
                if (soError != 0) {
                    fail(c, QStringLiteral("connect: %1").arg(qt_error_string(soError)));
                    continue;
                }
                // Writable once is enough: from now on only reads (and hang-ups) matter.
                epoll_event event{};
                event.events = EPOLLIN | EPOLLRDHUP;
                event.data.u64 = events[i].data.u64;
                ::epoll_ctl(m_epoll, EPOLL_CTL_MOD, c.fd, &event);
                c.state = State::Awaiting;
                if (!sendRequest(c)) {
                    fail(c, QStringLiteral("send: %1").arg(qt_error_string(errno)));
                    continue;
                }
            }
            if (events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
                read(c);
        }
    }

    void read(Connection &c)
    {
        char bytes[4096];
        bool eof = false;
        for (;;) {
            const ssize_t n = ::recv(c.fd, bytes, sizeof bytes, 0);
            if (n > 0) {
                c.buffer.append(bytes, qsizetype(n));
                continue;
            }
            eof = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
            break;
        }
        if (c.state == State::Awaiting) {
            HttpResponse response;
            const ResponseParser::Result result = ResponseParser::take(c.buffer, false, eof, response);
            if (result == ResponseParser::Result::Complete) {
                if (response.status != 200 || response.body != "Hello World\n") {
                    fail(c, QString::fromUtf8(response.describe()));
                    return;
                }
                c.state = State::Held;
                ++m_held;
            } else if (result == ResponseParser::Result::Error) {
                fail(c, response.error);
                return;
            }
        }
        if (eof)
            fail(c, QStringLiteral("the server closed the connection"));
    }

    quint16 m_port;
    int m_epoll;
    std::vector<Connection> m_connections;
    int m_held = 0;
    int m_failed = 0;
    QString m_firstFailure;
};

} // namespace

class C10kTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void tenThousandHeldConnectionsAndHelloStillFast_data();
    void tenThousandHeldConnectionsAndHelloStillFast();
};

void C10kTest::initTestCase()
{
    // The same helper the server starts with; the server child inherits the raised limit too.
    const taxicore::FileLimit limit = taxicore::raiseFileLimit();
    if (limit.soft >= 0 && limit.soft < kFdsNeeded)
        QSKIP(qPrintable(QStringLiteral("the open-file limit is %1 (hard %2); holding 10,000 connections needs "
                                        "about %3 in this process and in the server")
                             .arg(limit.soft)
                             .arg(limit.hard)
                             .arg(kFdsNeeded)));
}

void C10kTest::tenThousandHeldConnectionsAndHelloStillFast_data()
{
    QTest::addColumn<QString>("mode");
    QTest::newRow("single") << QStringLiteral("single");
    QTest::newRow("processes") << QStringLiteral("processes");
}

void C10kTest::tenThousandHeldConnectionsAndHelloStillFast()
{
    QFETCH(QString, mode);
    // Idle held connections must outlive the test (the default idle timeout is 15 s).
    ServerProcess server({QStringLiteral("--mode"), mode, QStringLiteral("--workers"), QStringLiteral("2"),
                          QStringLiteral("--cars"), QStringLiteral("50"), QStringLiteral("--idle-timeout-ms"),
                          QStringLiteral("120000")});
    QString error;
    QVERIFY2(startServing(server, mode, error), qPrintable(error));

    QElapsedTimer clock;
    clock.start();
    HeldConnections held(server.port());
    QVERIFY2(held.open(kHeld, kOpenDeadlineMs, error), qPrintable(error + QLatin1Char('\n') + server.stderrText()));
    const qint64 openedMs = clock.elapsed();

    std::vector<qint64> latencies;
    QByteArrayList failures;
    HttpClient probe(QStringLiteral("127.0.0.1"), server.port(), int(kProbeMaxLatencyMs) * 2);
    for (int i = 0; i < kProbes; ++i) {
        QElapsedTimer timer;
        timer.start();
        const HttpResponse response = probe.get("/hello");
        latencies.push_back(timer.elapsed());
        if (!response.complete || response.status != 200 || response.body != "Hello World\n")
            failures.append(response.describe());
        if (i % 20 == 0)
            QVERIFY2(held.closedByServer() == 0, "the server closed held connections");
    }
    QVERIFY2(held.reuse(100, 10'000, error), qPrintable(error));
    QCOMPARE(held.closedByServer(), 0);
    QCOMPARE(held.held(), kHeld);

    const qint64 p50 = percentile(latencies, 0.50);
    const qint64 p99 = percentile(latencies, 0.99);
    const qint64 max = *std::max_element(latencies.begin(), latencies.end());
    qInfo(
        "%s: %d connections held (opened in %lld ms); %d /hello with them held: p50 %lld ms, p99 %lld ms, max %lld ms",
        qPrintable(mode), kHeld, static_cast<long long>(openedMs), kProbes, static_cast<long long>(p50),
        static_cast<long long>(p99), static_cast<long long>(max));
    QVERIFY2(failures.isEmpty(), qPrintable(QStringLiteral("%1 of %2 /hello failed, first: %3")
                                                .arg(failures.size())
                                                .arg(kProbes)
                                                .arg(QString::fromUtf8(failures.value(0)))));
    QVERIFY2(max < kProbeMaxLatencyMs, qPrintable(QStringLiteral("slowest /hello took %1 ms").arg(max)));
    // The server stops first: it closes the held connections, so TIME_WAIT stays on its side.
    QCOMPARE(server.stop(20'000), 0);
}

QTEST_GUILESS_MAIN(C10kTest)
#include "hardening_c10k_test.moc"
