#include "WebSocketFrameParser.h"

#include <QTest>

using taxicore::feedprobe::encodeClientFrame;
using taxicore::feedprobe::WebSocketFrameParser;
using Kind = WebSocketFrameParser::Kind;

namespace {

// A server frame (unmasked) with the given first byte and payload, in the shortest length form.
QByteArray serverFrame(unsigned char first, const QByteArray &payload)
{
    QByteArray frame(1, char(first));
    const qsizetype n = payload.size();
    if (n < 126) {
        frame.append(char(n));
    } else if (n <= 0xffff) {
        frame.append(char(126));
        frame.append(char(n >> 8));
        frame.append(char(n & 0xff));
    } else {
        frame.append(char(127));
        for (int shift = 56; shift >= 0; shift -= 8)
            frame.append(char((quint64(n) >> shift) & 0xff));
    }
    return frame + payload;
}

constexpr unsigned char kFinText = 0x81, kText = 0x01, kFinContinuation = 0x80, kContinuation = 0x00;

// Feeds `bytes` in pieces of `piece`, as reads might return them; false at the first error.
bool feedInPieces(WebSocketFrameParser &parser, const QByteArray &bytes, qsizetype piece,
                  std::vector<WebSocketFrameParser::Message> &out)
{
    for (qsizetype at = 0; at < bytes.size(); at += piece)
        if (!parser.feed(bytes.constData() + at, std::min(piece, bytes.size() - at), out))
            return false;
    return true;
}

} // namespace

class WebSocketFrameParserTest : public QObject {
    Q_OBJECT

private slots:
    void readsMessagesSplitAnywhere_data()
    {
        QTest::addColumn<int>("piece");
        for (int piece : {1, 2, 3, 7, 100, 1 << 20})
            QTest::addRow("pieces of %d", piece) << piece;
    }
    void readsMessagesSplitAnywhere()
    {
        QFETCH(int, piece);
        const QByteArray medium(300, 'm');   // 16-bit length
        const QByteArray large(70'000, 'L'); // 64-bit length
        const QByteArray bytes = serverFrame(kFinText, "{\"type\":\"follow\"}") + serverFrame(kFinText, medium)
                                 + serverFrame(0x89, "ping!") + serverFrame(kFinText, large)
                                 + serverFrame(0x88, QByteArray("\x03\xe8", 2));
        WebSocketFrameParser parser;
        std::vector<WebSocketFrameParser::Message> out;
        QVERIFY(feedInPieces(parser, bytes, piece, out));
        QCOMPARE(out.size(), std::size_t(5));
        QCOMPARE(out[0].payload, QByteArray("{\"type\":\"follow\"}"));
        QCOMPARE(out[1].payload, medium);
        QVERIFY(out[2].kind == Kind::Ping);
        QCOMPARE(out[2].payload, QByteArray("ping!"));
        QVERIFY(out[3].kind == Kind::Text);
        QCOMPARE(out[3].payload.size(), large.size());
        QVERIFY(out[4].kind == Kind::Close);
    }

    void reassemblesFragmentsAroundControlFrames()
    {
        // A ping may come between the fragments of a message (RFC 6455 §5.4).
        const QByteArray bytes = serverFrame(kText, "{\"a\":") + serverFrame(0x89, "p") + serverFrame(kContinuation, "")
                                 + serverFrame(kFinContinuation, "1}");
        WebSocketFrameParser parser;
        std::vector<WebSocketFrameParser::Message> out;
        QVERIFY(feedInPieces(parser, bytes, 1, out));
        QCOMPARE(out.size(), std::size_t(2));
        QVERIFY(out[0].kind == Kind::Ping);
        QVERIFY(out[1].kind == Kind::Text);
        QCOMPARE(out[1].payload, QByteArray("{\"a\":1}"));
    }

    void rejectsMalformedFrames_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::newRow("masked by the server") << QByteArray("\x81\x81\x01\x02\x03\x04x", 7);
        QTest::newRow("reserved bit") << serverFrame(0xc1, "x");
        QTest::newRow("unknown data opcode") << serverFrame(0x83, "x");
        QTest::newRow("unknown control opcode") << serverFrame(0x8b, "x");
        QTest::newRow("fragmented ping") << serverFrame(0x09, "x");
        QTest::newRow("control frame over 125 bytes") << serverFrame(0x89, QByteArray(126, 'p'));
        QTest::newRow("continuation without a start") << serverFrame(kFinContinuation, "x");
        QTest::newRow("new message inside a fragmented one") << serverFrame(kText, "a") + serverFrame(kFinText, "b");
        QTest::newRow("64-bit length with the top bit") << QByteArray("\x81\x7f\x80\0\0\0\0\0\0\0", 10);
        QTest::newRow("larger than the limit") << serverFrame(kFinText, QByteArray(2000, 'x'));
        QTest::newRow("fragments larger than the limit")
            << serverFrame(kText, QByteArray(600, 'x')) + serverFrame(kFinContinuation, QByteArray(600, 'x'));
    }
    void rejectsMalformedFrames()
    {
        QFETCH(QByteArray, bytes);
        WebSocketFrameParser parser(1024);
        std::vector<WebSocketFrameParser::Message> out;
        QVERIFY(!parser.feed(bytes.constData(), bytes.size(), out));
        QVERIFY(!parser.error().isEmpty());
        QVERIFY(out.empty());
        // It stays failed: later bytes are not read as frames.
        const QByteArray good = serverFrame(kFinText, "ok");
        QVERIFY(!parser.feed(good.constData(), good.size(), out));
        QVERIFY(out.empty());
    }

    void waitsForTheRestOfAFrame()
    {
        const QByteArray frame = serverFrame(kFinText, QByteArray(70'000, 'x'));
        WebSocketFrameParser parser;
        std::vector<WebSocketFrameParser::Message> out;
        QVERIFY(parser.feed(frame.constData(), 9, out)); // inside the 64-bit length
        QVERIFY(parser.feed(frame.constData() + 9, frame.size() - 10, out));
        QVERIFY(out.empty());
        QVERIFY(parser.feed(frame.constData() + frame.size() - 1, 1, out));
        QCOMPARE(out.size(), std::size_t(1));
    }

    void encodesMaskedClientFrames_data()
    {
        QTest::addColumn<int>("size");
        QTest::addColumn<int>("header");
        QTest::newRow("7-bit length") << 125 << 6;
        QTest::newRow("16-bit length") << 126 << 8;
        QTest::newRow("64-bit length") << 70'000 << 14;
    }
    void encodesMaskedClientFrames()
    {
        QFETCH(int, size);
        QFETCH(int, header);
        QByteArray payload(size, Qt::Uninitialized);
        for (int i = 0; i < size; ++i)
            payload[i] = char(i * 7);
        const QByteArray frame = encodeClientFrame(Kind::Text, payload, 0xa1b2c3d4);
        QCOMPARE(frame.size(), qsizetype(header + size));
        QCOMPARE(quint8(frame[0]), quint8(0x81));
        QVERIFY(quint8(frame[1]) & 0x80);
        const QByteArray mask = frame.mid(header - 4, 4);
        QCOMPARE(mask, QByteArray("\xa1\xb2\xc3\xd4", 4));
        QByteArray unmasked = frame.mid(header);
        for (int i = 0; i < size; ++i)
            unmasked[i] = char(unmasked[i] ^ mask[i % 4]);
        QCOMPARE(unmasked, payload);
    }
};

QTEST_GUILESS_MAIN(WebSocketFrameParserTest)
#include "bench_websocket_frame_parser_test.moc"
