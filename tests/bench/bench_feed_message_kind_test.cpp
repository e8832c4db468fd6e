#include "FeedMessageKind.h"

#include <QTest>

using taxicore::feedprobe::feedMessageKind;
using taxicore::feedprobe::FeedMessageKind;

class FeedMessageKindTest : public QObject {
    Q_OBJECT

private slots:
    void toldFromTheFirstBytes_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<int>("kind");
        // What server/http/LiveFeed.cpp writes.
        QTest::newRow("follow") << QByteArray("{\"type\":\"follow\",\"t\":1,\"booking_id\":4,\"car\":null}")
                                << int(FeedMessageKind::Follow);
        QTest::newRow("update") << QByteArray("{\"type\":\"update\",\"t\":1,\"cars\":[]}")
                                << int(FeedMessageKind::Update);
        // Anything else is parsed in full by the caller.
        QTest::newRow("other type") << QByteArray("{\"type\":\"error\",\"error\":\"x\"}")
                                    << int(FeedMessageKind::Other);
        QTest::newRow("a longer type") << QByteArray("{\"type\":\"updates\",\"t\":1}") << int(FeedMessageKind::Other);
        QTest::newRow("type not first") << QByteArray("{\"t\":1,\"type\":\"update\"}") << int(FeedMessageKind::Other);
        QTest::newRow("spaces") << QByteArray("{ \"type\": \"follow\", \"t\":1}") << int(FeedMessageKind::Other);
        QTest::newRow("truncated") << QByteArray("{\"type\":\"upda") << int(FeedMessageKind::Other);
        QTest::newRow("empty") << QByteArray() << int(FeedMessageKind::Other);
    }
    void toldFromTheFirstBytes()
    {
        QFETCH(QByteArray, text);
        QFETCH(int, kind);
        QCOMPARE(int(feedMessageKind(text)), kind);
    }
};

QTEST_GUILESS_MAIN(FeedMessageKindTest)
#include "bench_feed_message_kind_test.moc"
