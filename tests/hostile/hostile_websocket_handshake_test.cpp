// Malformed WebSocket opening handshakes (RFC 6455 §4.1, §4.2.1, §4.4) against a real
// taxicore-server in one mode ($TAXICORE_HOSTILE_MODE; ctest hostile_websocket_handshake_test.single,
// .pool, .processes). A request asking for `Upgrade: websocket` that is not an HTTP/1.1 GET, names no
// host or has no valid Sec-WebSocket-Key gets 400, one without Sec-WebSocket-Version 13 gets 426 with
// `Sec-WebSocket-Version: 13`, each with a JSON error naming the problem, on the live feed's path
// and elsewhere (Qt 6.4 closed most of them without a word, and upgraded keys of the wrong
// length); the connection then closes and nothing sent after the handshake is answered. A valid
// handshake to the feed is still upgraded (101) and one elsewhere still gets 404.

#include "ApiAssert.h"
#include "HostileClientKit.h"

#include <QTest>

using namespace taxicore::test;
using namespace taxicore::test::hostile;

namespace {

constexpr int kTimeoutMs = 5000;                         // every read and the close of a refused connection
const QByteArray kValidKey = "dGhlIHNhbXBsZSBub25jZQ=="; // RFC 6455 §1.3's sample: 16 bytes
// Sent after the handshake: answered 200 by loopback trust if it were ever parsed as HTTP.
const QByteArray kHiddenRequest = "GET /admin/v1/runtime HTTP/1.1\r\nHost: t\r\n\r\n";

// An upgrade request to `path` with these extra fields (the key and version lines, or not).
QByteArray upgradeRequest(const QByteArray &path, const QByteArray &fields)
{
    return "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n" + fields
           + "\r\n";
}

} // namespace

class WebSocketHandshakeTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void malformedHandshakesAreRefused_data();
    void malformedHandshakesAreRefused();
    void validHandshakeToTheFeedIsUpgraded();
    void validHandshakeElsewhereIsNotFound();
    void refusedHandshakesLeaveTheLogAlone();

private:
    std::unique_ptr<ServerProcess> m_server;
};

void WebSocketHandshakeTest::initTestCase()
{
    const QString mode = hostile::modeUnderTest();
    qInfo("mode %s, server %s", qPrintable(mode), qPrintable(ServerProcess::binary()));
    m_server = std::make_unique<ServerProcess>(hostile::serverArgs(mode));
    QString error;
    QVERIFY2(startServing(*m_server, mode, error), qPrintable(error));
}

void WebSocketHandshakeTest::cleanupTestCase()
{
    if (m_server)
        m_server->stop();
}

void WebSocketHandshakeTest::malformedHandshakesAreRefused_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<int>("status");
    QTest::addColumn<QByteArray>("code");
    const QByteArray version13 = "Sec-WebSocket-Version: 13\r\n";
    const QByteArray key = "Sec-WebSocket-Key: " + kValidKey + "\r\n";
    for (const QByteArray &path : {QByteArray("/api/v1/stream"), QByteArray("/ws")}) {
        const auto row = [&path](const char *name) -> QTestData & {
            return QTest::addRow("%s %s", path.constData(), name);
        };
        row("no key") << upgradeRequest(path, version13) << 400 << QByteArray("invalid_websocket_key");
        row("empty key") << upgradeRequest(path, "Sec-WebSocket-Key: \r\n" + version13) << 400
                         << QByteArray("invalid_websocket_key");
        row("key not base64") << upgradeRequest(path, "Sec-WebSocket-Key: not*base64*at*all!!!!!!==\r\n" + version13)
                              << 400 << QByteArray("invalid_websocket_key");
        row("key of 15 bytes") << upgradeRequest(path, "Sec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAA\r\n" + version13) << 400
                               << QByteArray("invalid_websocket_key");
        row("key of 17 bytes") << upgradeRequest(path, "Sec-WebSocket-Key: AAAAAAAAAAAAAAAAAAAAAAA=\r\n" + version13)
                               << 400 << QByteArray("invalid_websocket_key");
        row("no version") << upgradeRequest(path, key) << 426 << QByteArray("unsupported_websocket_version");
        row("version 8") << upgradeRequest(path, key + "Sec-WebSocket-Version: 8\r\n") << 426
                         << QByteArray("unsupported_websocket_version");
        row("version 14") << upgradeRequest(path, key + "Sec-WebSocket-Version: 14\r\n") << 426
                          << QByteArray("unsupported_websocket_version");
        row("version not a number") << upgradeRequest(path, key + "Sec-WebSocket-Version: thirteen\r\n") << 426
                                    << QByteArray("unsupported_websocket_version");
        // One of each (RFC 6455 §4.2.1): a second, even the same again, must not pass for one.
        row("two keys") << upgradeRequest(path, key + key + version13) << 400 << QByteArray("invalid_websocket_key");
        row("two versions") << upgradeRequest(path, key + version13 + version13) << 426
                            << QByteArray("unsupported_websocket_version");
        row("neither key nor version") << upgradeRequest(path, {}) << 400 << QByteArray("invalid_websocket_key");
        row("not GET") << "POST " + upgradeRequest(path, key + version13).mid(4) << 400
                       << QByteArray("invalid_websocket_handshake");
        row("HTTP/1.0") << QByteArray(upgradeRequest(path, key + version13)).replace("HTTP/1.1", "HTTP/1.0") << 400
                        << QByteArray("invalid_websocket_handshake");
        row("empty Host") << QByteArray(upgradeRequest(path, key + version13)).replace("Host: 127.0.0.1", "Host:")
                          << 400 << QByteArray("invalid_websocket_handshake");
    }
}

// Answered at once with the error and its JSON body, then closed; what followed is not answered.
void WebSocketHandshakeTest::malformedHandshakesAreRefused()
{
    QFETCH(QByteArray, request);
    QFETCH(int, status);
    QFETCH(QByteArray, code);
    HttpClient c(m_server->host(), m_server->port(), kTimeoutMs);
    QVERIFY(c.connectToServer());
    QVERIFY(c.sendRaw(request + kHiddenRequest));
    const QList<HttpResponse> answers = wholeAnswers(c.readResponses(2));
    QVERIFY2(!answers.isEmpty(),
             qPrintable(QStringLiteral("no answer; received: %1").arg(QString::fromLatin1(c.buffered().left(200)))));
    TC_VERIFY_ERROR(answers[0], status, code.constData());
    if (status == 426)
        QCOMPARE(answers[0].header("Sec-WebSocket-Version"), QByteArray("13"));
    QCOMPARE(answers[0].header("Connection").toLower(), QByteArray("close"));
    QVERIFY2(answers.size() == 1, qPrintable(QStringLiteral("a request sent after the handshake was answered; ")
                                             + describeAnswers(answers)));
    QVERIFY(c.waitForPeerClose(kTimeoutMs));
}

void WebSocketHandshakeTest::validHandshakeToTheFeedIsUpgraded()
{
    HttpClient c(m_server->host(), m_server->port(), kTimeoutMs);
    QVERIFY(c.connectToServer());
    QVERIFY(c.sendRaw(
        upgradeRequest("/api/v1/stream", "Sec-WebSocket-Key: " + kValidKey + "\r\nSec-WebSocket-Version: 13\r\n")));
    const QList<HttpResponse> answers = wholeAnswers(c.readResponses(1));
    QVERIFY2(!answers.isEmpty(),
             qPrintable(QStringLiteral("no answer; received: ") + QString::fromLatin1(c.buffered().left(200))));
    TC_VERIFY_STATUS(answers[0], 101);
    // RFC 6455 §1.3: the accept value of the sample key.
    QCOMPARE(answers[0].header("Sec-WebSocket-Accept"), QByteArray("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
}

void WebSocketHandshakeTest::validHandshakeElsewhereIsNotFound()
{
    HttpClient c(m_server->host(), m_server->port(), kTimeoutMs);
    QVERIFY(c.connectToServer());
    QVERIFY(c.sendRaw(upgradeRequest("/ws", "Sec-WebSocket-Key: " + kValidKey + "\r\nSec-WebSocket-Version: 13\r\n")
                      + kHiddenRequest));
    const QList<HttpResponse> answers = wholeAnswers(c.readResponses(2));
    QVERIFY2(answers.size() == 1, qPrintable(describeAnswers(answers)));
    TC_VERIFY_ERROR(answers[0], 404, "not_found");
    QVERIFY(c.waitForPeerClose(kTimeoutMs));
}

// Qt's HTTP server logs a warning for every upgrade it was not told to take: a client sending
// refused handshakes in a loop must not be able to grow the operator's log (or journal) line by line.
void WebSocketHandshakeTest::refusedHandshakesLeaveTheLogAlone()
{
    for (int i = 0; i < 20; ++i) {
        HttpClient c(m_server->host(), m_server->port(), kTimeoutMs);
        QVERIFY(c.connectToServer());
        QVERIFY(c.sendRaw(upgradeRequest("/api/v1/stream", "Sec-WebSocket-Version: 13\r\n")));
        QVERIFY(c.waitForPeerClose(kTimeoutMs));
    }
    const QByteArray log = m_server->stderrText();
    QVERIFY2(!log.contains("WebSocket received"), log.right(600).constData());
}

QTEST_GUILESS_MAIN(WebSocketHandshakeTest)
#include "hostile_websocket_handshake_test.moc"
