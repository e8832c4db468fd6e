// The guard's direct path past Qt's parser (issue 18, /hello near nginx): a request it reads
// itself is read exactly as Qt's parser reads it, answers are the same bytes, requests read by
// either keep their order on a pipelined connection, and in pool mode a cheap constant route is
// answered on the I/O thread while every pool thread is busy.

#include "HttpClient.h"
#include "ServerProcess.h"

#include "http/RouteTable.h"
#include "wire/PlainRequest.h"
#include "wire/ResponseWriter.h"

#include <QElapsedTimer>
#include <QTest>
#include <QUrl>
#include <memory>

using namespace taxicore;
using namespace taxicore::test;

class DirectPathTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void plainRequestsAreReadAsQtReadsThem_data();
    void plainRequestsAreReadAsQtReadsThem();
    void requestsQtMustReadAreLeftToIt_data();
    void requestsQtMustReadAreLeftToIt();
    void serializedAnswersAreExact();
    void routesMatchWithoutCopies();
    void pipelinedDirectAndQtParsedRequestsKeepTheirOrder();
    void helloIsAnsweredInPoolModeWhileEveryPoolThreadIsBusy();
};

void DirectPathTest::plainRequestsAreReadAsQtReadsThem_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<int>("method");
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QByteArray>("authorization");
    QTest::newRow("hello") << QByteArray("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n") << int(HttpMethod::Get)
                           << QByteArray() << QByteArray();
    QTest::newRow("query") << QByteArray("GET /fib?n=25&x=%41 HTTP/1.1\r\n\r\n") << int(HttpMethod::Get) << QByteArray()
                           << QByteArray();
    QTest::newRow("sub-delims") << QByteArray("HEAD /a/../b;c=d/it's/(x)*+,!$&=:@~_.- HTTP/1.0\r\n\r\n")
                                << int(HttpMethod::Head) << QByteArray() << QByteArray();
    QTest::newRow("body and fields") << QByteArray("POST /api/v1/bookings HTTP/1.1\r\ncontent-LENGTH:  5 \r\n"
                                                   "Authorization: \tBearer abc \r\nAccept-Encoding: gzip\r\n\r\n"
                                                   "{\"a\"}")
                                     << int(HttpMethod::Post) << QByteArray("{\"a\"}") << QByteArray("Bearer abc");
    QTest::newRow("unknown method") << QByteArray("BREW /pot HTTP/1.1\r\n\r\n") << int(HttpMethod::Other)
                                    << QByteArray() << QByteArray();
}

void DirectPathTest::plainRequestsAreReadAsQtReadsThem()
{
    QFETCH(QByteArray, bytes);
    QFETCH(int, method);
    QFETCH(QByteArray, body);
    QFETCH(QByteArray, authorization);
    PlainRequest request;
    // A pipelined request after it is not part of it.
    const QByteArray stream = bytes + "GET /next HTTP/1.1\r\n\r\n";
    QCOMPARE(readPlainRequest(stream, request), bytes.size());
    QCOMPARE(int(request.method), method);
    // The path as QAbstractHttpServer gives it: url.path(FullyDecoded) of QUrl::fromEncoded(target).
    const QUrl url = QUrl::fromEncoded(request.target.toByteArray());
    QCOMPARE(request.path.toByteArray(), url.path(QUrl::FullyDecoded).toUtf8());
    QCOMPARE(request.hasQuery, url.hasQuery());
    QCOMPARE(request.body.toByteArray(), body);
    QCOMPARE(request.authorization.toByteArray(), authorization);
    QCOMPARE(request.authorization.data() != nullptr, !authorization.isEmpty());
}

void DirectPathTest::requestsQtMustReadAreLeftToIt_data()
{
    QTest::addColumn<QByteArray>("bytes");
    QTest::newRow("percent") << QByteArray("GET /%68ello HTTP/1.1\r\n\r\n");
    QTest::newRow("authority") << QByteArray("GET //hello HTTP/1.1\r\n\r\n");
    QTest::newRow("absolute") << QByteArray("GET http://x/hello HTTP/1.1\r\n\r\n");
    QTest::newRow("asterisk") << QByteArray("OPTIONS * HTTP/1.1\r\n\r\n");
    QTest::newRow("fragment") << QByteArray("GET /a?b#c HTTP/1.1\r\n\r\n");
    QTest::newRow("non-ascii") << QByteArray("GET /\xc3\xa5 HTTP/1.1\r\n\r\n");
    QTest::newRow("blank line first") << QByteArray("\r\nGET /hello HTTP/1.1\r\n\r\n");
    QTest::newRow("chunked") << QByteArray("POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
    QTest::newRow("upgrade") << QByteArray("GET /ws HTTP/1.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
    QTest::newRow("connection upgrade") << QByteArray("GET /x HTTP/1.1\r\nConnection: keep-alive, UPGRADE\r\n\r\n");
    QTest::newRow("expect") << QByteArray("POST /x HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx");
    QTest::newRow("repeated field") << QByteArray("GET /x HTTP/1.1\r\nX-Forwarded-For: 1.2.3.4\r\n"
                                                  "x-forwarded-for: 5.6.7.8\r\n\r\n");
    QTest::newRow("head not whole") << QByteArray("GET /hello HTTP/1.1\r\nHost: x\r\n");
    QTest::newRow("body not whole") << QByteArray("POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc");
}

void DirectPathTest::requestsQtMustReadAreLeftToIt()
{
    QFETCH(QByteArray, bytes);
    PlainRequest request;
    QCOMPARE(readPlainRequest(bytes, request), qsizetype(0));
}

void DirectPathTest::serializedAnswersAreExact()
{
    ApiResponse hello;
    hello.contentType = "text/plain";
    hello.body = "Hello World\n";
    QCOMPARE(serializeResponse(hello, false, true, false),
             QByteArray("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n"
                        "Connection: keep-alive\r\n\r\nHello World\n"));
    QCOMPARE(serializeResponse(hello, true, false, true),
             QByteArray("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n"
                        "Connection: close\r\n\r\n"));
    ApiResponse refused;
    refused.status = 405;
    refused.headers.append({QByteArrayLiteral("Allow"), QByteArrayLiteral("GET, HEAD")});
    refused.headers.append({QByteArrayLiteral("X-Empty"), QByteArray("")});
    QCOMPARE(serializeResponse(refused, false, true, false),
             QByteArray("HTTP/1.1 405 Method Not Allowed\r\nContent-Type: application/json\r\nContent-Length: 0\r\n"
                        "Connection: keep-alive\r\nAllow: GET, HEAD\r\nX-Empty: \r\n\r\n"));
    ApiResponse odd;
    odd.status = 599;
    odd.body = QByteArray(100'000, 'x');
    const QByteArray bytes = serializeResponse(odd, false, true, false);
    QVERIFY(bytes.startsWith("HTTP/1.1 599 Server Error\r\n")); // named by its class
    QVERIFY(bytes.contains("\r\nContent-Length: 100000\r\n"));
    QVERIFY(bytes.endsWith("\r\n\r\n" + odd.body));
}

void DirectPathTest::routesMatchWithoutCopies()
{
    RouteTable router;
    router.add(HttpMethod::Get, "/a/{id}/b", [](const ApiRequest &) { return ApiResponse{}; });
    router.addInline(HttpMethod::Get, "/hello", [](const ApiRequest &) { return ApiResponse{}; });
    const RouteTable::Match found = router.match(HttpMethod::Head, "//a//42/b/");
    QVERIFY(found.route != nullptr);
    QCOMPARE(found.params, QList<QByteArray>{"42"});
    QVERIFY(!found.route->runsInline);
    QVERIFY(router.match(HttpMethod::Get, "/hello").route->runsInline);
    const RouteTable::Match wrong = router.match(HttpMethod::Post, "/hello");
    QCOMPARE(wrong.error.status, 405);
    QCOMPARE(wrong.error.headers.value(0).second, QByteArray("GET, HEAD"));
    QByteArray deep;
    for (int i = 0; i <= RouteTable::kMaxSegments; ++i)
        deep += "/a";
    QCOMPARE(router.match(HttpMethod::Get, deep).error.status, 404);
}

void DirectPathTest::pipelinedDirectAndQtParsedRequestsKeepTheirOrder()
{
    ServerProcess server(
        {QStringLiteral("--mode"), QStringLiteral("single"), QStringLiteral("--cars"), QStringLiteral("20")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    HttpClient http(server.host(), server.port());
    QVERIFY(http.connectToServer());
    // Direct, Qt (percent-encoded), direct, Qt (chunked body), direct with a body, Qt (blank line
    // first), direct: one write, so each read holds several.
    QVERIFY(http.sendRaw("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n"
                         "GET /%66ib?n=%31%30 HTTP/1.1\r\nHost: x\r\n\r\n"
                         "GET /fib?n=11 HTTP/1.1\r\nHost: x\r\n\r\n"
                         "POST /hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n"
                         "POST /api/v1/bookings HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n[]"
                         "\r\nGET /%66ib?n=12 HTTP/1.1\r\nHost: x\r\n\r\n"
                         "HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\n"));
    const QList<HttpResponse> answers = http.readResponses(6);
    QCOMPARE(answers.size(), 6);
    QCOMPARE(answers[0].body, QByteArray("Hello World\n"));
    QCOMPARE(answers[1].json().value(QStringLiteral("fib")).toInt(), 55);
    QCOMPARE(answers[2].json().value(QStringLiteral("fib")).toInt(), 89);
    QCOMPARE(answers[3].status, 405);
    QCOMPARE(answers[4].status, 400);
    QCOMPARE(answers[5].json().value(QStringLiteral("fib")).toInt(), 144);
    const QList<HttpResponse> head = http.readResponses(1, true);
    QCOMPARE(head.size(), 1);
    QCOMPARE(head[0].status, 200);
    QCOMPARE(head[0].header("Content-Length"), QByteArray("12"));
    QVERIFY(head[0].body.isEmpty());
}

void DirectPathTest::helloIsAnsweredInPoolModeWhileEveryPoolThreadIsBusy()
{
    ServerProcess server({QStringLiteral("--mode"), QStringLiteral("pool"), QStringLiteral("--threads"),
                          QStringLiteral("2"), QStringLiteral("--cars"), QStringLiteral("20")});
    QVERIFY2(server.start(), qPrintable(server.error()));
    // fib(42) takes seconds: both pool threads are busy with one each.
    std::vector<std::unique_ptr<HttpClient>> busy;
    for (int i = 0; i < 2; ++i) {
        busy.push_back(std::make_unique<HttpClient>(server.host(), server.port(), 120'000));
        QVERIFY(busy.back()->connectToServer());
        QVERIFY(busy.back()->sendRaw(formatRequest("GET", "/fib?n=42")));
    }
    QTest::qWait(300);
    HttpClient http(server.host(), server.port(), 60'000);
    QElapsedTimer timer;
    timer.start();
    const HttpResponse hello = http.get("/hello");
    const qint64 helloMs = timer.elapsed();
    QCOMPARE(hello.status, 200);
    // Still computing: /hello did not wait for a pool thread (generous: the machine is shared).
    for (const auto &client : busy)
        QVERIFY2(client->socket()->bytesAvailable() == 0 && !client->socket()->waitForReadyRead(0),
                 "a fib(42) was answered before /hello: the check proves nothing");
    QVERIFY2(helloMs < 2'000, qPrintable(QStringLiteral("/hello took %1 ms behind busy pool threads").arg(helloMs)));
}

QTEST_GUILESS_MAIN(DirectPathTest)
#include "server_direct_path_test.moc"
