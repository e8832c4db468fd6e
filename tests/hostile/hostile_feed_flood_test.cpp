// A live-feed client that floods the feed with messages while reading every reply, against the
// real taxicore-server. Each message cost the feed's thread (the server's shared I/O thread) a
// JSON parse, and a subscribe fleet reads and a follower-index rebuild; nothing bounded their
// number, so one client could keep that thread busy without end. Now each client has a budget
// (http/FeedMessageBudget: 10 a second, bursts of 20): the flooder is closed with 1008 saying
// why, a rider on the same server keeps getting its updates, and the flood costs the server
// little CPU (its processes' CPU time is the measure: no timing of answers).

#include "ConnectionsKit.h"
#include "FeedClientKit.h"
#include "QtWebSocketLeakUnwind.h"

#include <QElapsedTimer>
#include <QTest>

using namespace taxicore::test;
using namespace taxicore::test::rt;
using namespace taxicore::test::hostile;

namespace {

constexpr int kFloodMessages = 20'000;
constexpr int kBatch = 100;         // sent at once, then written out before the next
constexpr int kMessageBytes = 4000; // under the feed's 4 KiB cap: each one is parsed
constexpr int kBurst = 20;          // FeedMessageBudget::kBurst
constexpr qint64 kCpuBoundMs = 250; // the flood may cost the server this much, not the whole flood
constexpr int kFloodDeadlineMs = 90'000;

// A valid subscribe of about `bytes`, made dear to parse: an extra field (the feed ignores it)
// holding an array of small numbers, each a JSON value of its own.
QString paddedSubscribe(int bytes)
{
    const QString head = QStringLiteral(R"({"subscribe":{"lat":57.7075,"lng":11.9675,"radius_m":2000,"pad":[0)");
    const QString tail = QStringLiteral("]}}");
    return head + QStringLiteral(",0").repeated((bytes - head.size() - tail.size()) / 2) + tail;
}

} // namespace

class FeedFloodTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void floodingClientIsClosedOthersServed_data();
    void floodingClientIsClosedOthersServed();
};

void FeedFloodTest::floodingClientIsClosedOthersServed_data()
{
    QTest::addColumn<QString>("mode");
    QTest::newRow("single") << QStringLiteral("single");
    QTest::newRow("pool") << QStringLiteral("pool");
}

void FeedFloodTest::floodingClientIsClosedOthersServed()
{
    QFETCH(QString, mode);
    ServerProcess server({QStringLiteral("--mode"), mode, QStringLiteral("--threads"), QStringLiteral("2"),
                          QStringLiteral("--cars"), QStringLiteral("50")});
    QVERIFY2(server.start(), qPrintable(server.error()));

    FeedClient rider;
    QVERIFY2(rider.open(server), qPrintable(rider.closeReason));
    rider.subscribe();
    QVERIFY2(waitUntil([&] { return rider.updates > 0; }, 5000, kFeedPollMs), "the rider got no update");

    FeedClient flooder;
    QVERIFY2(flooder.open(server), qPrintable(flooder.closeReason));
    const QString message = paddedSubscribe(kMessageBytes);
    const int riderUpdatesBefore = rider.updates;
    const qint64 cpuBefore = treeCpuMs(server.pid());
    QElapsedTimer flooding;
    flooding.start();
    int sent = 0;
    while (sent < kFloodMessages && !flooder.closed && flooding.elapsed() < kFloodDeadlineMs) {
        for (int i = 0; i < kBatch; ++i)
            flooder.socket->sendTextMessage(message);
        sent += kBatch;
        // Written out (and the replies read) before the next batch: the client reads, as the
        // flooder the budget is for does; only the count of its messages is hostile.
        waitUntil([&] { return flooder.closed || flooder.socket->bytesToWrite() == 0; }, 10'000, 1);
    }
    // Whatever the server still holds of the flood is done once it answers a last message.
    if (!flooder.closed) {
        flooder.socket->sendTextMessage(QStringLiteral("not json"));
        waitUntil([&] { return flooder.closed || flooder.errors > 0; }, kFloodDeadlineMs, kFeedPollMs);
    }
    const qint64 cpuMs = treeCpuMs(server.pid()) - cpuBefore;
    qInfo("%s: %d of %d messages sent in %lld ms before the feed %s; the server spent %lld ms CPU meanwhile",
          qPrintable(mode), sent, kFloodMessages, qint64(flooding.elapsed()),
          flooder.closed ? "closed the flooder" : "answered the last message", cpuMs);

    QVERIFY2(flooder.closed, qPrintable(QStringLiteral("a client sent %1 messages and was not closed").arg(sent)));
    QCOMPARE(flooder.closeCode, int(QWebSocketProtocol::CloseCodePolicyViolated));
    QVERIFY2(flooder.closeReason.contains(QStringLiteral("messages a second")), qPrintable(flooder.closeReason));
    QVERIFY2(sent < kFloodMessages, "the whole flood went through");
    QVERIFY2(cpuMs < kCpuBoundMs, qPrintable(QStringLiteral("the flood cost the server %1 ms CPU").arg(cpuMs)));

    // The rider on the same server goes on: updates keep coming, and it was never closed.
    const int riderUpdatesAfterFlood = rider.updates;
    QVERIFY2(
        waitUntil([&] { return rider.updates >= riderUpdatesAfterFlood + 2; }, 5000, kFeedPollMs),
        qPrintable(
            QStringLiteral("the rider got %1 updates after the flood").arg(rider.updates - riderUpdatesAfterFlood)));
    QVERIFY2(!rider.closed, qPrintable(rider.closeReason));
    QVERIFY(rider.updates > riderUpdatesBefore);

    // A client within its budget is not touched: kBurst messages at once, and another once the
    // budget has had time to refill.
    FeedClient steady;
    QVERIFY2(steady.open(server), qPrintable(steady.closeReason));
    for (int i = 0; i < kBurst; ++i)
        steady.subscribe();
    QVERIFY2(waitUntil([&] { return steady.updates > 0; }, 5000, kFeedPollMs), "no update after a burst");
    QTest::qWait(300); // inherent: the budget refills with time (3 messages in 300 ms)
    steady.subscribe();
    // A message with an answer of its own (a tick's update would come anyway): it is answered,
    // so the two messages after the refill were taken, and the client is still open.
    steady.socket->sendTextMessage(QStringLiteral("not json"));
    QVERIFY2(waitUntil([&] { return steady.errors > 0 || steady.closed; }, 5000, kFeedPollMs) && !steady.closed,
             qPrintable(QStringLiteral("after the refill: %1")
                            .arg(steady.closed ? steady.closeReason : QStringLiteral("no answer"))));
}

QTEST_GUILESS_MAIN(FeedFloodTest)
#include "hostile_feed_flood_test.moc"
