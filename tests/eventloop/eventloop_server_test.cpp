// Issue 18: taxicore-server serving on the epoll dispatcher (--event-loop epoll), end to end over
// loopback, in single mode and in processes mode (where the flag must reach the worker processes):
// /hello, keep-alive requests on one connection, 300 idle connections held while it answers,
// and the WebSocket feed's updates (timers and a long-lived socket). Which dispatcher runs is read
// from /proc: an epoll instance per process with epoll, none with Qt's (it uses poll()).

#include "ProcessInfo.h"
#include "RawSocket.h"
#include "RuntimeKit.h"

#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QWebSocket>
#include <cstring>
#include <sys/resource.h>
#include <unistd.h>
#include <vector>

using namespace taxicore::test;

namespace {

constexpr int kIdleConnections = 300;
constexpr int kKeepAliveRequests = 50;
constexpr int kWaitMs = 20'000;

// Epoll instances a process holds: /proc/PID/fd links named anon_inode:[eventpoll].
int epollInstances(qint64 pid)
{
    int count = 0;
    const QDir fds(QStringLiteral("/proc/%1/fd").arg(pid));
    for (const QString &fd : fds.entryList(QDir::NoDotAndDotDot | QDir::System)) {
        char target[256] = {};
        const QByteArray path = fds.filePath(fd).toLocal8Bit();
        if (::readlink(path.constData(), target, sizeof target - 1) > 0 && std::strstr(target, "eventpoll"))
            ++count;
    }
    return count;
}

} // namespace

class EventLoopServerTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        rlimit limit{};
        if (::getrlimit(RLIMIT_NOFILE, &limit) == 0) {
            limit.rlim_cur = limit.rlim_max;
            ::setrlimit(RLIMIT_NOFILE, &limit);
        }
    }

    void servesOnTheChosenLoop_data()
    {
        QTest::addColumn<QString>("mode");
        QTest::addColumn<QString>("loop");
        QTest::newRow("single epoll") << QStringLiteral("single") << QStringLiteral("epoll");
        QTest::newRow("processes epoll") << QStringLiteral("processes") << QStringLiteral("epoll");
        QTest::newRow("single qt") << QStringLiteral("single") << QStringLiteral("qt");
    }

    void servesOnTheChosenLoop()
    {
        QFETCH(QString, mode);
        QFETCH(QString, loop);
        const bool processes = mode == QStringLiteral("processes");
        ServerProcess server({QStringLiteral("--mode"), mode, QStringLiteral("--workers"), QStringLiteral("2"),
                              QStringLiteral("--cars"), QStringLiteral("50"), QStringLiteral("--event-loop"), loop});
        QVERIFY2(server.start(), qPrintable(server.error()));
        if (processes)
            QVERIFY2(rt::waitForWorkersTakingConnections(server, 2, kWaitMs), qPrintable(rt::describeEvents(server)));

        // Every process of the server runs the loop asked for: the primary's I/O thread, and
        // each worker's main thread (the flag reached them).
        const QList<qint64> pids = processTree(server.pid());
        QCOMPARE(pids.size(), processes ? 3 : 1);
        for (const qint64 pid : pids) {
            const int instances = epollInstances(pid);
            if (loop == QStringLiteral("epoll"))
                QVERIFY2(instances >= 1, qPrintable(QStringLiteral("pid %1 has no epoll instance").arg(pid)));
            else
                QVERIFY2(instances == 0,
                         qPrintable(QStringLiteral("pid %1 has %2 epoll instances").arg(pid).arg(instances)));
        }

        // Idle keep-alive connections held open (each a registered notifier somewhere).
        std::vector<int> idle;
        for (int i = 0; i < kIdleConnections; ++i) {
            const int fd = connectRaw(server.port());
            QVERIFY(fd >= 0);
            idle.push_back(fd);
        }
        // Keep-alive: one TCP connection, many requests.
        HttpClient http(server.host(), server.port());
        for (int i = 0; i < kKeepAliveRequests; ++i) {
            const HttpResponse r = http.get("/hello");
            QVERIFY2(r.complete && r.status == 200, r.describe().constData());
        }
        QCOMPARE(http.connections(), 1);

        // The live feed: the hello, then updates that the server's timers send by themselves.
        QWebSocket feed;
        QList<QJsonObject> messages;
        connect(&feed, &QWebSocket::textMessageReceived, this,
                [&](const QString &text) { messages.append(QJsonDocument::fromJson(text.toUtf8()).object()); });
        connect(&feed, &QWebSocket::connected, this,
                [&feed] { feed.sendTextMessage(QStringLiteral(R"({"subscribe":{"lat":57.7075,"lng":11.9675}})")); });
        feed.open(QUrl(QStringLiteral("ws://%1:%2/api/v1/stream").arg(server.host()).arg(server.port())));
        const auto updates = [&messages] {
            return std::count_if(messages.begin(), messages.end(),
                                 [](const QJsonObject &m) { return m.value("type") == QStringLiteral("update"); });
        };
        QVERIFY2(waitUntil([&] { return updates() >= 2; }, kWaitMs),
                 qPrintable(QStringLiteral("%1 feed messages, %2 updates").arg(messages.size()).arg(updates())));
        QVERIFY(!messages.isEmpty() && messages.first().value("type") == QStringLiteral("hello"));
        feed.close();

        // The held connections were all kept: each still gets an answer.
        for (int i = 0; i < kIdleConnections; i += kIdleConnections / 10) {
            QVERIFY(sendAll(idle[std::size_t(i)], "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n"));
        }
        for (int i = 0; i < kIdleConnections; i += kIdleConnections / 10) {
            QByteArray answer;
            QVERIFY2(waitUntil(
                         [&] {
                             char buffer[1024];
                             const ssize_t n = ::recv(idle[std::size_t(i)], buffer, sizeof buffer, 0);
                             if (n > 0)
                                 answer.append(buffer, n);
                             return answer.contains("\r\n\r\n");
                         },
                         kWaitMs, 10),
                     "an idle connection got no answer");
            QVERIFY2(answer.startsWith("HTTP/1.1 200"), answer.constData());
        }
        for (const int fd : idle)
            ::close(fd);
        QCOMPARE(server.stop(), 0);
    }

    void unknownLoopIsRefused()
    {
        const ServerProcess::RunResult run =
            ServerProcess::run({QStringLiteral("--event-loop"), QStringLiteral("glib")});
        QVERIFY(run.finished);
        QCOMPARE(run.exitCode, 2);
        QVERIFY2(run.err.contains("--event-loop must be qt or epoll"), run.err.constData());
    }
};

QTEST_GUILESS_MAIN(EventLoopServerTest)
#include "eventloop_server_test.moc"
