#include "FollowerLoop.h"

#include <QMutex>
#include <QSignalSpy>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QWebSocket>
#include <QWebSocketServer>

#include <arpa/inet.h>

#include <memory>

using taxicore::feedprobe::FollowerLoop;

namespace {

sockaddr_in loopbackAddress(quint16 port)
{
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return address;
}

// What the loop's thread handed over, read by the test's thread.
struct Received {
    QMutex mutex;
    std::vector<std::pair<int, QByteArray>> texts;
    int count()
    {
        QMutexLocker lock(&mutex);
        return int(texts.size());
    }
};

} // namespace

// The followers' client against Qt's own WebSocket server (the one the nodes use).
class FollowerLoopTest : public QObject {
    Q_OBJECT

private slots:
    void subscribesReadsFragmentedTextAnswersPingsAndCloses()
    {
        QWebSocketServer server(QStringLiteral("test"), QWebSocketServer::NonSecureMode);
        QVERIFY(server.listen(QHostAddress::LocalHost));
        // The caller owns what nextPendingConnection() returns (make test-asan found both peers leaked).
        std::vector<std::unique_ptr<QWebSocket>> peers;
        QStringList subscribes;
        connect(&server, &QWebSocketServer::newConnection, this, [&] {
            QWebSocket *peer = server.nextPendingConnection();
            connect(peer, &QWebSocket::textMessageReceived, this, [&](const QString &t) { subscribes << t; });
            peers.emplace_back(peer);
        });
        Received received;
        FollowerLoop loop([&](int follower, const QByteArray &text, double) {
            QMutexLocker lock(&received.mutex);
            received.texts.emplace_back(follower, text);
        });
        const sockaddr_in address = loopbackAddress(server.serverPort());
        loop.add(7, address, "127.0.0.1", "{\"subscribe\":{\"n\":7}}");
        loop.add(8, address, "127.0.0.1", "{\"subscribe\":{\"n\":8}}");
        loop.start();
        QTRY_COMPARE(subscribes.size(), 2);
        QVERIFY(subscribes.contains(QStringLiteral("{\"subscribe\":{\"n\":7}}")));

        // A message larger than one frame arrives whole; a ping is answered with its payload.
        QWebSocket *peer = peers.front().get();
        peer->setOutgoingFrameSize(16);
        const QString longText = QStringLiteral("{\"type\":\"follow\",\"pad\":\"%1\"}").arg(QString(100, u'x'));
        peer->sendTextMessage(longText);
        QSignalSpy pongs(peer, &QWebSocket::pong);
        peer->ping("are you there");
        QTRY_COMPARE(received.count(), 1);
        QCOMPARE(received.texts[0].second, longText.toUtf8());
        QVERIFY(received.texts[0].first == 7 || received.texts[0].first == 8);
        QTRY_COMPARE(pongs.size(), 1);
        QCOMPARE(pongs[0][1].toByteArray(), QByteArray("are you there"));
        QCOMPARE(loop.failures(), 0);

        // A server that closes one counts as a failure; stop() closes the other.
        peer->close();
        QTRY_COMPARE(loop.failures(), 1);
        QSignalSpy closed(peers.back().get(), &QWebSocket::disconnected);
        loop.stop();
        QTRY_COMPARE(closed.size(), 1);
    }

    void refusedAndRejectedConnectionsFail()
    {
        QTcpServer notWebSocket; // answers the upgrade with a plain 404
        QVERIFY(notWebSocket.listen(QHostAddress::LocalHost));
        connect(&notWebSocket, &QTcpServer::newConnection, this, [&] {
            QTcpSocket *s = notWebSocket.nextPendingConnection();
            connect(s, &QTcpSocket::readyRead, s,
                    [s] { s->write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"); });
        });
        QTcpServer closedPort;
        QVERIFY(closedPort.listen(QHostAddress::LocalHost));
        const quint16 refusing = closedPort.serverPort();
        closedPort.close();
        FollowerLoop loop([](int, const QByteArray &, double) {});
        loop.add(1, loopbackAddress(refusing), "127.0.0.1", "{}");
        loop.add(2, loopbackAddress(notWebSocket.serverPort()), "127.0.0.1", "{}");
        loop.start();
        QTRY_COMPARE(loop.failures(), 2);
        loop.stop();
    }
};

QTEST_GUILESS_MAIN(FollowerLoopTest)
#include "bench_follower_loop_test.moc"
