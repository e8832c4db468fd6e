#include "WebSocketHandshake.h"

#include <QTest>

using namespace taxicore::feedprobe;

namespace {

// RFC 6455 §1.3's example key and the accept value it asks for.
const QByteArray kKey = QByteArrayLiteral("dGhlIHNhbXBsZSBub25jZQ==");
const QByteArray kAccept = QByteArrayLiteral("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");

} // namespace

class WebSocketHandshakeTest : public QObject {
    Q_OBJECT

private slots:
    void requestAsksForAnUpgrade()
    {
        const QByteArray request = handshakeRequest("127.0.0.1:8080", "/api/v1/stream", kKey);
        QVERIFY(request.startsWith("GET /api/v1/stream HTTP/1.1\r\n"));
        QVERIFY(request.contains("\r\nHost: 127.0.0.1:8080\r\n"));
        QVERIFY(request.contains("\r\nSec-WebSocket-Key: " + kKey + "\r\n"));
        QVERIFY(request.contains("\r\nSec-WebSocket-Version: 13\r\n"));
        QVERIFY(request.endsWith("\r\n\r\n"));
    }

    void acceptsTheRightAnswerAndKeepsTheFramesAfterIt()
    {
        const QByteArray head = "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                                "sec-websocket-accept: "
                                + kAccept + "\r\n\r\n";
        const HandshakeAnswer incomplete = readHandshakeAnswer(head.left(head.size() - 1), kKey);
        QCOMPARE(incomplete.state, HandshakeAnswer::Incomplete);
        const HandshakeAnswer answer = readHandshakeAnswer(head + "\x81\x01x", kKey);
        QCOMPARE(answer.state, HandshakeAnswer::Accepted);
        QCOMPARE(answer.headerBytes, head.size());
    }

    void rejectsOtherAnswers_data()
    {
        QTest::addColumn<QByteArray>("received");
        QTest::newRow("not 101") << QByteArray("HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
        QTest::newRow("wrong accept") << QByteArray(
            "HTTP/1.1 101 Switching Protocols\r\nSec-WebSocket-Accept: AAAA\r\n\r\n");
        QTest::newRow("no accept") << QByteArray("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n");
        QTest::newRow("endless header") << QByteArray("HTTP/1.1 101 OK\r\n")
                                               + QByteArray(kMaxHandshakeAnswerBytes, 'x');
    }
    void rejectsOtherAnswers()
    {
        QFETCH(QByteArray, received);
        const HandshakeAnswer answer = readHandshakeAnswer(received, kKey);
        QCOMPARE(answer.state, HandshakeAnswer::Rejected);
        QVERIFY(!answer.reason.isEmpty());
    }
};

QTEST_GUILESS_MAIN(WebSocketHandshakeTest)
#include "bench_websocket_handshake_test.moc"
