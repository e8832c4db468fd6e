// A WebSocket ping flood from a client that never reads (found by the exploratory tester, stop
// 13): Qt answers every ping with a pong by itself, and the pongs pile up in the server for a
// client that reads nothing. The feed counted only its own messages against its 256 KiB limit, so
// one anonymous client grew the server by as much as it sent (33 MB → 610 MB in 3 s). Now a feed
// client with more than the limit waiting to be written is dropped, whatever the bytes are, and
// the server's memory (VmRSS over its processes) stays bounded. On the old code this test sends
// its whole budget and the server grows by about as much.

#include "ConnectionsKit.h"

#include <QElapsedTimer>
#include <QWebSocketProtocol>
#include <netinet/tcp.h>

using namespace taxicore::test;
using namespace taxicore::test::rt;
using namespace taxicore::test::hostile;

namespace {

constexpr qint64 kSendBudget = 256ll << 20;  // the most the client sends before giving up
constexpr qint64 kGrowthBoundKiB = 64 << 10; // the server may grow this much, not by the budget
constexpr int kSendTimeoutMs = 3000;

// A masked client frame (RFC 6455 §5.3): ping, `payload` bytes of zeros.
QByteArray pingFrame(int payload)
{
    QByteArray frame;
    frame.append(char(0x89));                // FIN, opcode 9 (ping)
    frame.append(char(0x80 | payload));      // masked, length < 126
    frame.append(QByteArray(4, char(0x5a))); // the mask (zeros XOR mask is the payload sent)
    frame.append(QByteArray(payload, char(0x5a)));
    return frame;
}

// Connects with a small receive buffer, upgrades to the feed, subscribes; the fd, or -1.
int openFeed(quint16 port)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const int small = 4096;
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    const timeval timeout{kSendTimeoutMs / 1000, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) {
        ::close(fd);
        return -1;
    }
    const QByteArray upgrade = "GET /api/v1/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n"
                               "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                               "Sec-WebSocket-Version: 13\r\n\r\n";
    if (::send(fd, upgrade.constData(), size_t(upgrade.size()), MSG_NOSIGNAL) != upgrade.size()) {
        ::close(fd);
        return -1;
    }
    QByteArray answer;
    char buffer[1024];
    while (!answer.contains("\r\n\r\n")) {
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n <= 0) {
            ::close(fd);
            return -1;
        }
        answer.append(buffer, n);
    }
    if (!answer.startsWith("HTTP/1.1 101")) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// A masked client text frame subscribing to a point.
QByteArray subscribeFrame()
{
    const QByteArray text = R"({"subscribe":{"lat":57.7075,"lng":11.9675}})";
    QByteArray frame;
    frame.append(char(0x81));
    frame.append(char(0x80 | text.size()));
    frame.append(QByteArray(4, '\0')); // a zero mask: the text as it is
    frame.append(text);
    return frame;
}

// A masked client data frame without payload: `opcode` 0 (a continuation) or 1 (text), FIN unset.
QByteArray unfinishedFrame(char opcode)
{
    QByteArray frame;
    frame.append(opcode);
    frame.append(char(0x80)); // masked, no payload
    frame.append(QByteArray(4, '\0'));
    return frame;
}

// The close code of the first close frame among the server's (unmasked) frames; 0 when none.
int closeCodeIn(const QByteArray &bytes)
{
    qsizetype at = 0;
    while (at + 2 <= bytes.size()) {
        const int opcode = bytes[at] & 0x0f;
        qint64 length = bytes[at + 1] & 0x7f;
        qsizetype header = 2;
        if (length == 126 && at + 4 <= bytes.size()) {
            length = (uchar(bytes[at + 2]) << 8) | uchar(bytes[at + 3]);
            header = 4;
        } else if (length == 127) {
            return 0; // the feed sends nothing that large here
        }
        if (opcode == 8 && length >= 2 && at + header + 2 <= bytes.size())
            return (uchar(bytes[at + header]) << 8) | uchar(bytes[at + header + 1]);
        at += header + length;
    }
    return 0;
}

} // namespace

class FeedPingFloodTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void pingFloodWithoutReadingIsDropped_data();
    void pingFloodWithoutReadingIsDropped();
    void aMessageThatNeverEndsIsClosed();
};

void FeedPingFloodTest::pingFloodWithoutReadingIsDropped_data()
{
    QTest::addColumn<QString>("mode");
    QTest::newRow("single") << QStringLiteral("single");
    QTest::newRow("pool") << QStringLiteral("pool");
    QTest::newRow("processes") << QStringLiteral("processes");
}

void FeedPingFloodTest::pingFloodWithoutReadingIsDropped()
{
    QFETCH(QString, mode);
    ServerProcess server({QStringLiteral("--mode"), mode, QStringLiteral("--workers"), QStringLiteral("1"),
                          QStringLiteral("--threads"), QStringLiteral("2"), QStringLiteral("--cars"),
                          QStringLiteral("50")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    if (mode == QStringLiteral("processes"))
        QVERIFY2(waitForWorkersTakingConnections(server, 1, 20'000), qPrintable(describeEvents(server)));
    const qint64 rssAtStart = treeRssKiB(server.pid());

    const int fd = openFeed(server.port());
    QVERIFY2(fd >= 0, "the feed upgrade failed");
    const QByteArray subscribe = subscribeFrame();
    QCOMPARE(::send(fd, subscribe.constData(), size_t(subscribe.size()), MSG_NOSIGNAL), ssize_t(subscribe.size()));

    // Pings as fast as the server takes them, never reading an answer.
    QByteArray burst;
    const QByteArray ping = pingFrame(125);
    while (burst.size() < (64 << 10))
        burst.append(ping);
    qint64 sent = 0;
    qint64 peakKiB = rssAtStart;
    bool dropped = false;
    QElapsedTimer sinceSample;
    sinceSample.start();
    QElapsedTimer flooding;
    flooding.start();
    while (sent < kSendBudget && flooding.elapsed() < 60'000) {
        const ssize_t n = ::send(fd, burst.constData(), size_t(burst.size()), MSG_NOSIGNAL);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            continue; // the server is busy: its memory is what is measured, not its speed
        if (n <= 0) {
            dropped = true; // EPIPE / ECONNRESET: the server closed the connection
            break;
        }
        sent += n;
        if (sinceSample.elapsed() >= 100) {
            peakKiB = std::max(peakKiB, treeRssKiB(server.pid()));
            sinceSample.restart();
        }
    }
    peakKiB = std::max(peakKiB, treeRssKiB(server.pid()));
    ::close(fd);
    qInfo("%s: sent %lld MiB, server %lld → peak %lld MiB, %s", qPrintable(mode), sent >> 20, rssAtStart >> 10,
          peakKiB >> 10, dropped ? "dropped" : "never dropped");
    QVERIFY2(
        dropped,
        qPrintable(QStringLiteral("the server took %1 MiB of pings from a client that reads nothing").arg(sent >> 20)));
    QVERIFY2(peakKiB - rssAtStart < kGrowthBoundKiB,
             qPrintable(QStringLiteral("the server grew by %1 MiB").arg((peakKiB - rssAtStart) >> 10)));
    // And it serves on.
    QVERIFY2(waitUntil([&] { return call(server, "GET", "/hello", {}, 2000).status == 200; }, 5000),
             "no HTTP service after the flood");
}

// A text frame without FIN, then continuation frames without payload for ever: a message that
// never ends, so it never reaches the 4 KiB bound nor the message budget, while each frame costs
// the feed's thread its parse. Frames are charged to the budget: closed with 1008 after its burst.
void FeedPingFloodTest::aMessageThatNeverEndsIsClosed()
{
    constexpr int kFrames = 200'000;
    ServerProcess server({QStringLiteral("--cars"), QStringLiteral("50")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    const int fd = openFeed(server.port());
    QVERIFY2(fd >= 0, "the feed upgrade failed");
    // Subscribed first: the feed's idle timeout closes a client that never subscribes.
    const QByteArray subscribe = subscribeFrame();
    QByteArray endless = subscribe + unfinishedFrame(0x01);
    for (int i = 0; i < 1000; ++i)
        endless.append(unfinishedFrame(0x00));
    const QByteArray more = endless.mid(subscribe.size() + 6); // 1,000 continuations

    int sentFrames = 0;
    bool refused = false;
    QElapsedTimer sending;
    sending.start();
    for (const QByteArray *chunk = &endless; sentFrames < kFrames && sending.elapsed() < 20'000; chunk = &more) {
        if (::send(fd, chunk->constData(), size_t(chunk->size()), MSG_NOSIGNAL) != chunk->size()) {
            refused = true; // EPIPE / ECONNRESET: the server closed it
            break;
        }
        sentFrames += 1000;
    }
    // What the server sent: its updates, then (once the budget is spent) its close frame.
    QByteArray received;
    char buffer[4096];
    QElapsedTimer reading;
    reading.start();
    bool closed = false;
    while (!closed && reading.elapsed() < 10'000) {
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n > 0)
            received.append(buffer, n);
        else
            closed = n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
        if (closeCodeIn(received) != 0)
            break;
    }
    ::close(fd);
    const int code = closeCodeIn(received);
    qInfo("%d frames sent (%s); close code %d", sentFrames, refused ? "then refused" : "all taken", code);
    QVERIFY2(code == int(QWebSocketProtocol::CloseCodePolicyViolated),
             qPrintable(QStringLiteral("after %1 frames of one endless message: close code %2, %3")
                            .arg(sentFrames)
                            .arg(code)
                            .arg(closed ? QStringLiteral("connection closed") : QStringLiteral("still open"))));
    QVERIFY2(waitUntil([&] { return call(server, "GET", "/hello", {}, 2000).status == 200; }, 5000),
             "no HTTP service after the flood");
}

QTEST_GUILESS_MAIN(FeedPingFloodTest)
#include "hostile_feed_ping_flood_test.moc"
