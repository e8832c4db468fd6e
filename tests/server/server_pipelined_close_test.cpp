// Requests pipelined behind one whose answer closes the connection (the client's Connection: close,
// HTTP/1.0 without keep-alive) are never executed (RFC 9112 §9.6): the client gets one answer and
// the fleet holds only the bookings it was answered for — on the guard's direct path and through
// Qt's parser (a %-encoded path is Qt's to read, server/wire/PlainRequest.cpp). ctest runs it
// once per mode: $TAXICORE_SERVER_MODE.

#include "ApiAssert.h"
#include "HttpClient.h"
#include "IdempotencyKit.h"
#include "ServingKit.h"

#include <QTest>
#include <memory>

using namespace taxicore::test;

namespace {

constexpr int kCars = 40;
// How long the server is given to run anything it read after the closing request (it runs a
// pipelined request as soon as it parses it, before the next request of another connection).
constexpr int kSettleMs = 300;

QByteArray booking(const QByteArray &path, const QByteArray &version, const QByteArray &connection)
{
    const QByteArray body = R"({"rider_id":"pipelined-close","pickup":{"lat":57.70,"lng":11.97}})";
    QByteArray request = "POST " + path + " " + version + "\r\nHost: 127.0.0.1\r\n";
    if (!connection.isEmpty())
        request += "Connection: " + connection + "\r\n";
    return request + "Content-Type: application/json\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\n\r\n"
           + body;
}

} // namespace

class PipelinedCloseTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void nothingAfterAClosingRequestRuns_data();
    void nothingAfterAClosingRequestRuns();

private:
    std::unique_ptr<ServerProcess> m_server;
};

void PipelinedCloseTest::initTestCase()
{
    const QString mode = qEnvironmentVariable("TAXICORE_SERVER_MODE", QStringLiteral("single"));
    m_server = std::make_unique<ServerProcess>(QStringList{
        QStringLiteral("--mode"), mode, QStringLiteral("--workers"), QStringLiteral("2"), QStringLiteral("--cars"),
        QString::number(kCars), QStringLiteral("--sim-speed"), QStringLiteral("0.001")});
    QString error;
    QVERIFY2(startServing(*m_server, mode, error), qPrintable(error));
}

void PipelinedCloseTest::cleanupTestCase()
{
    if (m_server) {
        QVERIFY2(m_server->isRunning(), "the server died during the tests: " + m_server->stderrText());
        QCOMPARE(m_server->stop(), 0);
    }
}

void PipelinedCloseTest::nothingAfterAClosingRequestRuns_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<int>("expectedStatus"); // of the one answer
    QTest::addColumn<int>("expectedBookings");

    const QByteArray direct = "/api/v1/bookings";
    const QByteArray qt = "/api/v1/booking%73"; // the same route, read by Qt's parser
    const QByteArray follow = booking(direct, "HTTP/1.1", {}) + booking(direct, "HTTP/1.1", {});
    const QByteArray followQt = booking(qt, "HTTP/1.1", {}) + booking(qt, "HTTP/1.1", {});
    QTest::newRow("Connection: close, direct") << booking(direct, "HTTP/1.1", "close") + follow << 201 << 1;
    QTest::newRow("Connection: close, Qt's parser") << booking(qt, "HTTP/1.1", "close") + followQt << 201 << 1;
    QTest::newRow("HTTP/1.0, direct") << booking(direct, "HTTP/1.0", {}) + follow << 201 << 1;
    QTest::newRow("HTTP/1.0, Qt's parser") << booking(qt, "HTTP/1.0", {}) + followQt << 201 << 1;
    // An inline route (answered before the next request is read) closing ahead of bookings.
    QTest::newRow("GET /hello close, direct")
        << QByteArray("GET /hello HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") + follow << 200 << 0;
    QTest::newRow("GET /hello close, Qt's parser")
        << QByteArray("GET /hel%6Co HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n") + followQt << 200 << 0;
}

void PipelinedCloseTest::nothingAfterAClosingRequestRuns()
{
    QFETCH(QByteArray, bytes);
    QFETCH(int, expectedStatus);
    QFETCH(int, expectedBookings);

    HttpClient admin(m_server->host(), m_server->port(), 5000);
    const int before = availableCars(admin);
    QVERIFY2(before >= 3, "too few available cars to start with");

    HttpClient c(m_server->host(), m_server->port(), 5000);
    QVERIFY(c.connectToServer());
    QVERIFY(c.sendRaw(bytes)); // one write: the server has all three requests at once
    bool closed = false;
    QByteArray received = c.readUntilClosed(&closed);
    QVERIFY2(closed, "the server did not close after the closing request");
    QList<HttpResponse> answers;
    for (;;) {
        HttpResponse r;
        if (ResponseParser::take(received, false, true, r) != ResponseParser::Result::Complete)
            break;
        answers.append(r);
    }
    QVERIFY2(received.isEmpty(), "bytes after the last whole answer: " + received.left(200));
    QCOMPARE(answers.size(), 1);
    TC_VERIFY_STATUS(answers[0], expectedStatus);
    QCOMPARE(answers[0].header("Connection").toLower(), QByteArray("close"));

    // Anything run after the close would have taken a car by now.
    QTest::qWait(kSettleMs);
    const int after = availableCars(admin);
    QVERIFY2(
        before - after == expectedBookings,
        qPrintable(QStringLiteral("%1 cars taken, %2 booking(s) answered").arg(before - after).arg(expectedBookings)));
}

QTEST_GUILESS_MAIN(PipelinedCloseTest)
#include "server_pipelined_close_test.moc"
