// A connection the server refuses without reading its request (429 or 503 too_many_connections:
// over --max-connections-per-client or --max-connections) or stops reading at a framing error
// (413, 431) hears why and then an orderly end of stream, even when the client had already sent
// its request, as every ordinary client does. The server used to close such a socket with the
// client's bytes unread, and the kernel then resets the connection instead of ending it: a client
// still sending saw its send fail, one reading to the end saw "connection reset", and a reset
// that overtakes the answer (on a real network) loses it. Now the server half-closes after its
// answer and drops what the client still sends, for a bounded time, before it closes.
#include "AddressedClient.h"
#include "HttpClient.h"
#include "ServerProcess.h"

#include <QTest>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

using namespace taxicore::test;
using taxicore::test::hostile::AddressedClient;

namespace {

// Enough tries that a race lost one time in a few shows.
constexpr int kTries = 50;
// Connections held here stay open for the whole case.
const QString kIdleMs = QStringLiteral("120000");

// Legitimate requests, all of which is sent before any answer is read, and none of which a
// server that refuses the connection reads: a large head, and a body near --max-body-bytes.
QByteArray largeHead()
{
    return "GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Padding: " + QByteArray(8 * 1024, 'p') + "\r\n\r\n";
}

QByteArray largeBody()
{
    return "POST /api/v1/bookings HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
           "Content-Length: 61440\r\n\r\n"
           + QByteArray(60 * 1024, ' ');
}

// A client that sends a request in pieces, and goes on sending the rest of it after the server
// refused it (an upload whose 413 comes after its head): the rest must go out without a reset.
struct PiecedRequest {
    QByteArray first;
    QByteArray rest; // sent in pieces once the answer came
    int pieceBytes = 0;
};

// The head of a POST whose declared body is over --max-body-bytes, then 48 KiB of that body.
PiecedRequest oversizeBody()
{
    return {"POST /api/v1/bookings HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Content-Length: 1048576\r\n\r\n",
            QByteArray(48 * 1024, 'b'), 16 * 1024};
}

// A head over --max-header-bytes (32 KiB) in fields of 4 KiB, then the rest of that head.
PiecedRequest oversizeHead()
{
    QByteArray head = "GET /hello HTTP/1.1\r\nHost: 127.0.0.1\r\n";
    for (int i = 0; i < 10; ++i)
        head += "X-Padding-" + QByteArray::number(i) + ": " + QByteArray(4 * 1024, 'h') + "\r\n";
    QByteArray rest;
    for (int i = 10; i < 14; ++i)
        rest += "X-Padding-" + QByteArray::number(i) + ": " + QByteArray(4 * 1024 - 20, 'h') + "\r\n";
    return {head, rest + "\r\n", 4 * 1024};
}

// The answer is a whole `status` whose JSON names `code`, and the connection then ends with an end
// of stream; otherwise `why` says what came.
bool heardWhy(AddressedClient &client, int status, const QString &code, const QByteArray &attempt, QByteArray &why)
{
    const HttpResponse r = client.read(5000);
    if (!r.complete || r.status != status || r.json().value("error").toString() != code) {
        why = attempt + " should read " + QByteArray::number(status) + " " + code.toLatin1() + ", got: " + r.describe();
        return false;
    }
    const QByteArray end = client.howItEnds(5000);
    if (end != "end of stream") {
        why = attempt + ": after its " + QByteArray::number(status) + " the connection should end with an "
              + "end of stream, not: " + end;
        return false;
    }
    return true;
}

// `kTries` connections from `from`, each sending all of `request` at once and then reading: each
// must hear why (heardWhy).
bool everyTryHearsWhy(const ServerProcess &server, const char *from, const QByteArray &request, int status,
                      const QString &code, QByteArray &why)
{
    for (int i = 0; i < kTries; ++i) {
        const QByteArray attempt = "try " + QByteArray::number(i + 1) + " of " + QByteArray::number(kTries);
        AddressedClient client(from, server.port());
        if (!client.connected()) {
            why = attempt + ": could not connect";
            return false;
        }
        if (!client.send(request)) {
            why = attempt + ": the request could not be sent whole (" + QByteArray(std::strerror(errno)) + ')';
            return false;
        }
        if (!heardWhy(client, status, code, attempt, why))
            return false;
    }
    return true;
}

// `kTries` connections, each sending the first piece of `request`, then, once the answer came, the
// rest of it piece by piece: every piece must go out (no reset), and the answer must be heard.
bool everyPiecedTryHearsWhy(const ServerProcess &server, const PiecedRequest &request, int status, const QString &code,
                            QByteArray &why)
{
    for (int i = 0; i < kTries; ++i) {
        const QByteArray attempt = "try " + QByteArray::number(i + 1) + " of " + QByteArray::number(kTries);
        AddressedClient client("127.0.0.1", server.port());
        if (!client.connected() || !client.send(request.first) || !client.waitReadable(5000)) {
            why = attempt + ": no answer came to the start of the request";
            return false;
        }
        for (qsizetype at = 0; at < request.rest.size(); at += request.pieceBytes) {
            if (!client.send(request.rest.mid(at, request.pieceBytes))) {
                why = attempt + ": sending the rest of the request after the answer came failed ("
                      + QByteArray(std::strerror(errno)) + "): the server reset the connection";
                return false;
            }
        }
        if (!heardWhy(client, status, code, attempt, why))
            return false;
    }
    return true;
}

// Opens connections from `from` until one is refused with `status`: the ones served are held.
bool fillUp(std::vector<std::unique_ptr<AddressedClient>> &held, const ServerProcess &server, const char *from,
            int status, int most, QByteArray &why)
{
    for (int i = 0; i <= most; ++i) {
        auto client = std::make_unique<AddressedClient>(from, server.port());
        const HttpResponse r = client->served();
        if (r.complete && r.status == status)
            return true;
        if (!r.complete || r.status != 200 || r.header("Connection").compare("close", Qt::CaseInsensitive) == 0) {
            why = "connection " + QByteArray::number(i + 1) + " was not held: " + r.describe();
            return false;
        }
        held.push_back(std::move(client));
    }
    why = QByteArray("more than ") + QByteArray::number(most) + " connections were served";
    return false;
}

} // namespace

class RefusalDeliveryTest : public QObject {
    Q_OBJECT

private slots:
    void overThePerClientCapTheClientReads429_data() { requests(); }
    void overThePerClientCapTheClientReads429();
    void overTheTotalCapTheClientReads503_data() { requests(); }
    void overTheTotalCapTheClientReads503();
    void aFramingRefusalIsReadWhileTheClientStillSends_data();
    void aFramingRefusalIsReadWhileTheClientStillSends();

private:
    static void requests()
    {
        QTest::addColumn<QByteArray>("request");
        QTest::newRow("8 KiB head") << largeHead();
        QTest::newRow("60 KiB body") << largeBody();
    }
};

void RefusalDeliveryTest::overThePerClientCapTheClientReads429()
{
    QFETCH(QByteArray, request);
    constexpr int kLimit = 2;
    ServerProcess server({QStringLiteral("--cars"), QStringLiteral("10"), QStringLiteral("--trust-loopback"),
                          QStringLiteral("off"), QStringLiteral("--idle-timeout-ms"), kIdleMs,
                          QStringLiteral("--max-connections-per-client"), QString::number(kLimit)});
    QVERIFY2(server.start(), qPrintable(server.error()));
    std::vector<std::unique_ptr<AddressedClient>> held;
    QByteArray why;
    QVERIFY2(fillUp(held, server, "127.0.0.2", 429, kLimit, why), why.constData());
    QVERIFY2(everyTryHearsWhy(server, "127.0.0.2", request, 429, QStringLiteral("too_many_connections"), why),
             why.constData());
    QCOMPARE(server.stop(), 0);
}

void RefusalDeliveryTest::overTheTotalCapTheClientReads503()
{
    QFETCH(QByteArray, request);
    constexpr int kMaxConnections = 3;
    ServerProcess server({QStringLiteral("--cars"), QStringLiteral("10"), QStringLiteral("--idle-timeout-ms"), kIdleMs,
                          QStringLiteral("--max-connections"), QString::number(kMaxConnections)});
    QVERIFY2(server.start(), qPrintable(server.error()));
    std::vector<std::unique_ptr<AddressedClient>> held;
    QByteArray why;
    QVERIFY2(fillUp(held, server, "127.0.0.1", 503, kMaxConnections, why), why.constData());
    QVERIFY2(everyTryHearsWhy(server, "127.0.0.1", request, 503, QStringLiteral("too_many_connections"), why),
             why.constData());
    QCOMPARE(server.stop(), 0);
}

void RefusalDeliveryTest::aFramingRefusalIsReadWhileTheClientStillSends_data()
{
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("code");
    QTest::newRow("413 body") << 413 << QStringLiteral("body_too_large");
    QTest::newRow("431 head") << 431 << QStringLiteral("headers_too_large");
}

void RefusalDeliveryTest::aFramingRefusalIsReadWhileTheClientStillSends()
{
    QFETCH(int, status);
    QFETCH(QString, code);
    ServerProcess server({QStringLiteral("--cars"), QStringLiteral("10")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    QByteArray why;
    QVERIFY2(everyPiecedTryHearsWhy(server, status == 413 ? oversizeBody() : oversizeHead(), status, code, why),
             why.constData());
    QCOMPARE(server.stop(), 0);
}

QTEST_GUILESS_MAIN(RefusalDeliveryTest)
#include "hostile_refusal_delivery_test.moc"
