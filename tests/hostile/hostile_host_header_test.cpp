// The Host header field (RFC 9112 §3.2) against a real taxicore-server in one mode
// ($TAXICORE_HOSTILE_MODE; ctest hostile_host_header_test.single, .pool, .processes): an HTTP/1.1
// request without Host, or any request with more than one Host line, is refused with 400 and a
// JSON error naming the problem (also a Host whose value is not a host[:port]), and the connection
// closes with nothing after it answered,
// whichever parser would have read the request (the guard's direct path or Qt's). HTTP/1.0
// without Host is still served, and so is one Host, empty or not.

#include "ApiAssert.h"
#include "HostileClientKit.h"

#include <QTest>

using namespace taxicore::test;
using namespace taxicore::test::hostile;

namespace {

constexpr int kTimeoutMs = 5000; // every read and the close of a refused connection
// Hidden after a refused head: answered 200 by loopback trust if it were ever parsed.
const QByteArray kHiddenRequest = "GET /admin/v1/runtime HTTP/1.1\r\nHost: t\r\n\r\n";

} // namespace

class HostHeaderTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void requestsWithoutExactlyOneHostAreRefused_data();
    void requestsWithoutExactlyOneHostAreRefused();
    void refusalComesAfterTheAnswersBeforeIt();
    void requestsWithOneHostOrHttp10AreServed_data();
    void requestsWithOneHostOrHttp10AreServed();

private:
    std::unique_ptr<ServerProcess> m_server;
};

void HostHeaderTest::initTestCase()
{
    const QString mode = hostile::modeUnderTest();
    qInfo("mode %s, server %s", qPrintable(mode), qPrintable(ServerProcess::binary()));
    m_server = std::make_unique<ServerProcess>(hostile::serverArgs(mode));
    QString error;
    QVERIFY2(startServing(*m_server, mode, error), qPrintable(error));
}

void HostHeaderTest::cleanupTestCase()
{
    if (m_server)
        m_server->stop();
}

void HostHeaderTest::requestsWithoutExactlyOneHostAreRefused_data()
{
    QTest::addColumn<QByteArray>("head");
    QTest::addColumn<QByteArray>("code");
    QTest::newRow("http11-no-host") << QByteArray("GET /hello HTTP/1.1\r\n\r\n") << QByteArray("missing_host");
    // A target only Qt's parser reads (percent-encoded), and a request with a body.
    QTest::newRow("http11-no-host-qt-parsed")
        << QByteArray("GET /%68ello HTTP/1.1\r\n\r\n") << QByteArray("missing_host");
    QTest::newRow("http11-no-host-with-body")
        << QByteArray("POST /api/v1/bookings HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
        << QByteArray("missing_host");
    QTest::newRow("http11-no-host-upgrade")
        << QByteArray("GET /api/v1/stream HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n"
                      "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n")
        << QByteArray("missing_host");
    QTest::newRow("http11-host-is-not-x-host")
        << QByteArray("GET /hello HTTP/1.1\r\nX-Host: t\r\nHosts: t\r\n\r\n") << QByteArray("missing_host");
    QTest::newRow("http11-two-hosts") << QByteArray("GET /hello HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n")
                                      << QByteArray("duplicate_host");
    QTest::newRow("http11-two-hosts-same-value")
        << QByteArray("GET /hello HTTP/1.1\r\nHost: a\r\nhOST: a\r\n\r\n") << QByteArray("duplicate_host");
    QTest::newRow("http11-three-hosts") << QByteArray("GET /hello HTTP/1.1\r\nHost: a\r\nHost: b\r\nHost: c\r\n\r\n")
                                        << QByteArray("duplicate_host");
    QTest::newRow("http10-two-hosts") << QByteArray("GET /hello HTTP/1.0\r\nHost: a\r\nHost: b\r\n\r\n")
                                      << QByteArray("duplicate_host");
    // RFC 9112 §3.2: a Host whose value is not a host[:port] is refused too.
    QTest::newRow("host-with-space") << QByteArray("GET /hello HTTP/1.1\r\nHost: a b\r\n\r\n")
                                     << QByteArray("invalid_host");
    QTest::newRow("host-with-path") << QByteArray("GET /hello HTTP/1.1\r\nHost: example.com/x\r\n\r\n")
                                    << QByteArray("invalid_host");
    QTest::newRow("host-with-userinfo") << QByteArray("GET /hello HTTP/1.1\r\nHost: user@example.com\r\n\r\n")
                                        << QByteArray("invalid_host");
    QTest::newRow("host-with-quote") << QByteArray("GET /%68ello HTTP/1.1\r\nHost: \"t\"\r\n\r\n")
                                     << QByteArray("invalid_host");
}

// Refused with 400 and the problem named; the connection closes and what followed is never read.
void HostHeaderTest::requestsWithoutExactlyOneHostAreRefused()
{
    QFETCH(QByteArray, head);
    QFETCH(QByteArray, code);
    HttpClient c(m_server->host(), m_server->port(), kTimeoutMs);
    QVERIFY(c.connectToServer());
    QVERIFY(c.sendRaw(head + kHiddenRequest));
    const QList<HttpResponse> answers = wholeAnswers(c.readResponses(2));
    QVERIFY2(!answers.isEmpty(),
             qPrintable(QStringLiteral("no answer; received: ") + QString::fromLatin1(c.buffered().left(200))));
    TC_VERIFY_ERROR(answers[0], 400, code.constData());
    QVERIFY2(answers[0].json().value(QStringLiteral("message")).toString().contains(QStringLiteral("Host")),
             answers[0].describe().constData());
    QCOMPARE(answers[0].header("Connection").toLower(), QByteArray("close"));
    QVERIFY2(answers.size() == 1,
             qPrintable(QStringLiteral("the request after the refused one was answered; ") + describeAnswers(answers)));
    QVERIFY(c.waitForPeerClose(kTimeoutMs));
}

// Pipelined: the good request before the refused one is answered first, then the 400.
void HostHeaderTest::refusalComesAfterTheAnswersBeforeIt()
{
    HttpClient c(m_server->host(), m_server->port(), kTimeoutMs);
    QVERIFY(c.connectToServer());
    QVERIFY(c.sendRaw("GET /hello HTTP/1.1\r\nHost: t\r\n\r\nGET /hello HTTP/1.1\r\n\r\n" + kHiddenRequest));
    const QList<HttpResponse> answers = wholeAnswers(c.readResponses(3));
    QVERIFY2(answers.size() == 2, qPrintable(describeAnswers(answers)));
    TC_VERIFY_STATUS(answers[0], 200);
    TC_VERIFY_ERROR(answers[1], 400, "missing_host");
    QVERIFY(c.waitForPeerClose(kTimeoutMs));
}

void HostHeaderTest::requestsWithOneHostOrHttp10AreServed_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::newRow("http11-one-host") << QByteArray("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n");
    QTest::newRow("http11-host-lower-case") << QByteArray("GET /hello HTTP/1.1\r\nhost: t:8080\r\n\r\n");
    // RFC 9112 §3.2: a target without an authority may come with an empty Host.
    QTest::newRow("http11-empty-host") << QByteArray("GET /hello HTTP/1.1\r\nHost:\r\n\r\n");
    QTest::newRow("http10-no-host") << QByteArray("GET /hello HTTP/1.0\r\n\r\n");
    QTest::newRow("http10-one-host") << QByteArray("GET /hello HTTP/1.0\r\nHost: t\r\n\r\n");
    QTest::newRow("host-ipv6-port") << QByteArray("GET /hello HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n");
    QTest::newRow("host-name-port-spaces") << QByteArray("GET /hello HTTP/1.1\r\nHost:  taxi.example.com:443 \r\n\r\n");
}

void HostHeaderTest::requestsWithOneHostOrHttp10AreServed()
{
    QFETCH(QByteArray, request);
    HttpClient c(m_server->host(), m_server->port(), kTimeoutMs);
    QVERIFY(c.connectToServer());
    QVERIFY(c.sendRaw(request));
    const QList<HttpResponse> answers = wholeAnswers(c.readResponses(1));
    QVERIFY2(!answers.isEmpty(),
             qPrintable(QStringLiteral("no answer; received: ") + QString::fromLatin1(c.buffered().left(200))));
    TC_VERIFY_STATUS(answers[0], 200);
    QCOMPARE(answers[0].body, QByteArray("Hello World\n"));
}

QTEST_GUILESS_MAIN(HostHeaderTest)
#include "hostile_host_header_test.moc"
