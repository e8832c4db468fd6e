// LiveFeed's bounds, in-process over a real SharedRegion and a minimal QAbstractHttpServer that
// lets WebSocket upgrades through the way HttpService does: the client cap (the next client is
// closed with 1008 and "too many live clients; retry shortly"), the update interval, a client that
// leaves, a client that stops reading (dropped), and the feed going away (every client is
// closed with 1001, none left dangling).

#include "LiveFeedKit.h"
#include "Wait.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTcpSocket>
#include <QTest>
#include <QWebSocket>
#include <memory>
#include <vector>

using namespace taxicore;
using namespace taxicore::test;
using taxicore::test::waitUntil;

namespace {

struct Client {
    std::unique_ptr<QWebSocket> socket = std::make_unique<QWebSocket>();
    int updates = 0;
    bool closed = false;

    Client()
    {
        QObject::connect(socket.get(), &QWebSocket::textMessageReceived, [this](const QString &text) {
            if (QJsonDocument::fromJson(text.toUtf8()).object().value("type") == QLatin1String("update"))
                ++updates;
        });
        QObject::connect(socket.get(), &QWebSocket::disconnected, [this] { closed = true; });
    }
    void subscribe() { socket->sendTextMessage(R"({"subscribe":{"lat":57.7075,"lng":11.9675,"radius_m":5000}})"); }
};

} // namespace

class WebFeedLimitsTest : public QObject, LiveFeedFixture {
    Q_OBJECT

private slots:
    void init()
    {
        QString error;
        QVERIFY2(startFeed({150, 12, 0.001}, error), qPrintable(error));
    }

    void cleanup()
    {
        m_clients.clear(); // before the feed they are clients of
        stopFeed();
    }

    void capOnClients()
    {
        m_feed->setMaxClients(2);
        for (int i = 0; i < 3; ++i) {
            m_clients.push_back(std::make_unique<Client>());
            QSignalSpy connected(m_clients.back()->socket.get(), &QWebSocket::connected);
            m_clients.back()->socket->open(m_url);
            QVERIFY(connected.wait(5000));
            QVERIFY(waitUntil([&] { return m_feed->clientCount() == std::min(i + 1, 2) || m_clients.back()->closed; },
                              2000));
        }
        QVERIFY2(waitUntil([&] { return m_clients[2]->closed; }, 5000), "the client over the cap was not closed");
        QCOMPARE(m_clients[2]->socket->closeCode(), QWebSocketProtocol::CloseCodePolicyViolated);
        QCOMPARE(m_clients[2]->socket->closeReason(), QStringLiteral("too many live clients; retry shortly"));
        QCOMPARE(m_feed->clientCount(), 2);
        m_clients[0]->subscribe();
        QVERIFY(waitUntil([&] { return m_clients[0]->updates > 0; }, 3000));
        QVERIFY(!m_clients[0]->closed && !m_clients[1]->closed);

        // One leaves: its place is free again.
        m_clients[1]->socket->close();
        QVERIFY(waitUntil([&] { return m_feed->clientCount() == 1; }, 3000));
    }

    void intervalIsHonoured()
    {
        m_feed->setIntervalMs(100);
        m_clients.push_back(std::make_unique<Client>());
        Client &c = *m_clients.back();
        QSignalSpy connected(c.socket.get(), &QWebSocket::connected);
        c.socket->open(m_url);
        QVERIFY(connected.wait(5000));
        c.subscribe();
        QVERIFY(waitUntil([&] { return c.updates > 0; }, 2000));
        const int before = c.updates;
        QTest::qWait(1000); // inherent: counts the updates of one second (a rate)
        const int perSecond = c.updates - before;
        QVERIFY2(perSecond >= 6 && perSecond <= 12, qPrintable(QString::number(perSecond)));
    }

    // A client that stops reading: its unsent bytes pile up in the server's socket once the
    // kernel buffers are full, and the feed drops it instead of buffering without bound.
    void slowClientIsDropped()
    {
        m_feed->setIntervalMs(10);
        m_feed->setMaxPendingBytes(64 * 1024);
        QTcpSocket raw;
        raw.setReadBufferSize(4096); // Qt stops reading from the kernel when this is full
        raw.connectToHost(QHostAddress::LocalHost, quint16(m_url.port()));
        QVERIFY(raw.waitForConnected(5000));
        raw.write("GET /api/v1/stream HTTP/1.1\r\nHost: 127.0.0.1:" + QByteArray::number(m_url.port())
                  + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
        QVERIFY(waitUntil([&] { return m_feed->clientCount() == 1; }, 5000));
        // One masked text frame (clients must mask): subscribe to every car, 100 per update.
        const QByteArray payload = R"({"subscribe":{"lat":57.705,"lng":11.965,"radius_m":50000,"limit":100}})";
        const char mask[4] = {0x11, 0x22, 0x33, 0x44};
        QByteArray frame;
        frame.append(char(0x81)).append(char(0x80 | payload.size())).append(mask, 4);
        for (qsizetype i = 0; i < payload.size(); ++i)
            frame.append(char(payload[i] ^ mask[i % 4]));
        QVERIFY(payload.size() < 126);
        raw.write(frame);
        QVERIFY2(waitUntil([&] { return m_feed->clientCount() == 0; }, 30'000),
                 "a client that does not read was not dropped");
        // Reading again, the client finds the connection closed behind what was sent.
        raw.setReadBufferSize(0);
        QVERIFY(waitUntil(
            [&] {
                raw.readAll();
                return raw.state() != QAbstractSocket::ConnectedState;
            },
            10'000));
    }

    void feedGoingAwayClosesItsClients()
    {
        m_clients.push_back(std::make_unique<Client>());
        Client &c = *m_clients.back();
        QSignalSpy connected(c.socket.get(), &QWebSocket::connected);
        c.socket->open(m_url);
        QVERIFY(connected.wait(5000));
        c.subscribe();
        QVERIFY(waitUntil([&] { return c.updates > 0; }, 3000));
        m_feed.reset();
        QVERIFY2(waitUntil([&] { return c.closed; }, 5000), "a client outlived the feed");
        // Told why: going away (1001), not a connection lost.
        QCOMPARE(c.socket->closeCode(), QWebSocketProtocol::CloseCodeGoingAway);
    }

private:
    std::vector<std::unique_ptr<Client>> m_clients;
};

QTEST_GUILESS_MAIN(WebFeedLimitsTest)
#include "web_feed_limits_test.moc"
