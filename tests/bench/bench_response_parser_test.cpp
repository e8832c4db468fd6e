#include "engine/HttpResponseParser.h"

#include <QTest>

using taxicore::bench::HttpResponseParser;
using State = HttpResponseParser::State;

namespace {

// Feeds `bytes` in pieces of `piece` bytes, as a socket might deliver them.
State feedInPieces(HttpResponseParser &parser, const std::string &bytes, std::size_t piece)
{
    State state = State::NeedMore;
    for (std::size_t at = 0; at < bytes.size() && state == State::NeedMore; at += piece)
        state = parser.feed(bytes.data() + at, std::min(piece, bytes.size() - at));
    return state;
}

} // namespace

class HttpResponseParserTest : public QObject {
    Q_OBJECT

private slots:
    void completesResponses_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<int>("status");
        QTest::addColumn<QByteArray>("body");
        QTest::addColumn<bool>("keepAlive");
        QTest::newRow("content-length") << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello World\n")
                                        << 200 << QByteArray("Hello World\n") << true;
        QTest::newRow("chunked") << QByteArray("HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
                                               "5;ext=1\r\nHello\r\n7\r\n World\n\r\n0\r\nX-Trailer: 1\r\n\r\n")
                                 << 201 << QByteArray("Hello World\n") << true;
        QTest::newRow("connection close")
            << QByteArray("HTTP/1.1 500 Oops\r\nconnection: Close\r\ncontent-length: 2\r\n\r\nno") << 500
            << QByteArray("no") << false;
        QTest::newRow("http/1.0 closes by default")
            << QByteArray("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n") << 200 << QByteArray() << false;
        QTest::newRow("http/1.0 keep-alive")
            << QByteArray("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx") << 200
            << QByteArray("x") << true;
        QTest::newRow("204 has no body") << QByteArray("HTTP/1.1 204 No Content\r\n\r\n") << 204 << QByteArray()
                                         << true;
    }

    void completesResponses()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(int, status);
        QFETCH(QByteArray, body);
        QFETCH(bool, keepAlive);
        for (const std::size_t piece : {std::size_t{1}, std::size_t{3}, std::size_t{1 << 20}}) {
            HttpResponseParser parser;
            parser.reset(true);
            QCOMPARE(feedInPieces(parser, bytes.toStdString(), piece), State::Complete);
            QCOMPARE(parser.status(), status);
            QCOMPARE(QByteArray::fromStdString(std::string(parser.body())), body);
            QCOMPARE(parser.keepAlive(), keepAlive);
        }
    }

    void bodyUntilCloseCompletesOnlyWhenTheConnectionEnds()
    {
        HttpResponseParser parser;
        parser.reset(true);
        const std::string bytes = "HTTP/1.0 200 OK\r\n\r\nHello";
        QCOMPARE(parser.feed(bytes.data(), bytes.size()), State::NeedMore);
        QCOMPARE(parser.finishOnClose(), State::Complete);
        QCOMPARE(std::string(parser.body()), std::string("Hello"));
        QVERIFY(!parser.keepAlive());
    }

    void truncatedResponseIsAnErrorOnClose()
    {
        HttpResponseParser parser;
        parser.reset(false);
        const std::string bytes = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc";
        QCOMPARE(parser.feed(bytes.data(), bytes.size()), State::NeedMore);
        QCOMPARE(parser.finishOnClose(), State::Error);
    }

    void bodyIsDroppedUnlessKept()
    {
        HttpResponseParser parser;
        parser.reset(false);
        const std::string bytes = "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc";
        QCOMPARE(parser.feed(bytes.data(), bytes.size()), State::Complete);
        QVERIFY(parser.body().empty());
    }

    void malformedResponsesAreErrors_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::newRow("not http") << QByteArray("SSH-2.0-OpenSSH\r\n\r\n");
        QTest::newRow("bad status") << QByteArray("HTTP/1.1 2x0 OK\r\n\r\n");
        QTest::newRow("bad length") << QByteArray("HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n");
        QTest::newRow("bad chunk") << QByteArray("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
    }

    void malformedResponsesAreErrors()
    {
        QFETCH(QByteArray, bytes);
        HttpResponseParser parser;
        parser.reset(false);
        QCOMPARE(parser.feed(bytes.constData(), static_cast<std::size_t>(bytes.size())), State::Error);
    }

    void oversizedHeadIsAnError()
    {
        HttpResponseParser parser;
        parser.reset(false);
        std::string bytes = "HTTP/1.1 200 OK\r\nX-Big: " + std::string(HttpResponseParser::kMaxHeaderBytes, 'a');
        QCOMPARE(parser.feed(bytes.data(), bytes.size()), State::Error);
    }
};

QTEST_GUILESS_MAIN(HttpResponseParserTest)
#include "bench_response_parser_test.moc"
