// The live feed's bounds on what a client sends, against the real taxicore-server: a message over
// 4 KiB (LiveFeed's kMaxIncomingBytes) is closed with 1009 (too much data), sent as one 8 KiB
// frame or as four 2 KiB fragments, and a binary message with 1003 (text JSON only). Each closed
// client must also leave the feed's count of clients: the count is not exported (taxicore_open_
// connections leaves out upgraded sockets), so the test reads it through the cap on clients from
// one address (LiveFeed::kDefaultMaxClientsPerAddress), as a trusted proxy names them. With every
// place but one held, each offender takes the last place; the next one gets it only if the
// offender before it was forgotten.

#include "ConnectionsKit.h"
#include "FeedClientKit.h"
#include "QtWebSocketLeakUnwind.h"

#include <QTest>
#include <memory>
#include <vector>

using namespace taxicore::test;
using namespace taxicore::test::rt;
using namespace taxicore::test::hostile;

namespace {

constexpr int kPerAddress = 32; // LiveFeed::kDefaultMaxClientsPerAddress
const QByteArray kClientAddress = QByteArrayLiteral("203.0.113.7");
constexpr int kMaxIncomingBytes = 4096;

QString subscribePaddedTo(int bytes)
{
    const QString head = QStringLiteral(R"({"subscribe":{"lat":57.7075,"lng":11.9675,"pad":")");
    const QString tail = QStringLiteral(R"("}})");
    return head + QString(bytes - head.size() - tail.size(), u'x') + tail;
}

} // namespace

class FeedOversizeTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase() { raiseOwnFileLimit(); }
    void oversizedAndBinaryMessagesAreClosedAndForgotten_data();
    void oversizedAndBinaryMessagesAreClosedAndForgotten();
};

void FeedOversizeTest::oversizedAndBinaryMessagesAreClosedAndForgotten_data()
{
    QTest::addColumn<QString>("mode");
    QTest::newRow("single") << QStringLiteral("single");
    QTest::newRow("pool") << QStringLiteral("pool");
}

void FeedOversizeTest::oversizedAndBinaryMessagesAreClosedAndForgotten()
{
    QFETCH(QString, mode);
    ServerProcess server({QStringLiteral("--mode"), mode, QStringLiteral("--threads"), QStringLiteral("2"),
                          QStringLiteral("--cars"), QStringLiteral("50"), QStringLiteral("--trusted-proxy"),
                          QStringLiteral("127.0.0.1")});
    QVERIFY2(server.start(), qPrintable(server.error()));

    std::vector<std::unique_ptr<FeedClient>> holders;
    for (int i = 0; i < kPerAddress - 1; ++i) {
        holders.push_back(std::make_unique<FeedClient>());
        QVERIFY2(holders.back()->open(server, kClientAddress),
                 qPrintable(QStringLiteral("holder %1 was not taken: %2").arg(i).arg(holders.back()->closeReason)));
        holders.back()->subscribe();
    }

    struct Offence {
        const char *name;
        std::function<void(QWebSocket &)> send;
        int closeCode;
    };
    const std::vector<Offence> offences{
        {"8 KiB in one frame", [](QWebSocket &s) { s.sendTextMessage(subscribePaddedTo(2 * kMaxIncomingBytes)); },
         int(QWebSocketProtocol::CloseCodeTooMuchData)},
        {"8 KiB in four 2 KiB fragments",
         [](QWebSocket &s) {
             s.setOutgoingFrameSize(kMaxIncomingBytes / 2);
             s.sendTextMessage(subscribePaddedTo(2 * kMaxIncomingBytes));
         },
         int(QWebSocketProtocol::CloseCodeTooMuchData)},
        {"a binary message", [](QWebSocket &s) { s.sendBinaryMessage(QByteArray(16, 'b')); },
         int(QWebSocketProtocol::CloseCodeDatatypeNotSupported)},
    };
    for (const Offence &offence : offences) {
        FeedClient offender;
        QVERIFY2(offender.open(server, kClientAddress),
                 qPrintable(QStringLiteral("before \"%1\": the last place from the address was not free (%2): the "
                                           "client closed before was not forgotten")
                                .arg(QLatin1String(offence.name), offender.closeReason)));
        offence.send(*offender.socket);
        QVERIFY2(offender.waitClosed(5000), offence.name);
        qInfo("%s: %s → %d %s", qPrintable(mode), offence.name, offender.closeCode, qPrintable(offender.closeReason));
        QCOMPARE(offender.closeCode, offence.closeCode);
        QVERIFY2(offender.updates == 0, offence.name);
    }
    FeedClient last;
    QVERIFY2(
        last.open(server, kClientAddress),
        qPrintable(QStringLiteral("after the binary message: the last place was not free (%1)").arg(last.closeReason)));
    // The cap itself still holds: one more from the address is refused.
    FeedClient over;
    QVERIFY(!over.open(server, kClientAddress));
    QVERIFY2(over.closeReason.contains(QStringLiteral("from one address")), qPrintable(over.closeReason));

    // The holders were never disturbed, and a message of exactly 4 KiB is still taken.
    last.socket->sendTextMessage(subscribePaddedTo(kMaxIncomingBytes));
    QVERIFY2(waitUntil([&] { return last.updates > 0 || last.closed; }, 5000) && last.updates > 0,
             qPrintable(QStringLiteral("a 4 KiB subscribe: %1 %2").arg(last.closeCode).arg(last.closeReason)));
    for (const auto &holder : holders)
        QVERIFY2(!holder->closed, qPrintable(holder->closeReason));
}

QTEST_GUILESS_MAIN(FeedOversizeTest)
#include "hostile_feed_oversize_test.moc"
