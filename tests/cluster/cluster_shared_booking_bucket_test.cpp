// SharedBookingLimiter in-process against a real redis-server (issue 17): two limiters over two
// regions (two nodes) take from one bucket in Redis with BookingRateLimiter's burst, rate and
// Retry-After; the bucket expires once full again; a flushed script cache is refilled; a stuck or
// stopped Redis hands the decision to the node's own buckets within the bound, once in the event
// log, and Redis decides again when it is back.

#include "control/EventLog.h"
#include "fleet/SharedMemoryFleet.h"
#include "http/SharedBookingLimiter.h"
#include "redis/RedisEndpoint.h"
#include "region/RegionLayout.h"
#include "region/SharedRegion.h"

#include "RedisKit.h"
#include "RequireTool.h"
#include "Wait.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonObject>
#include <QTest>
#include <QThread>
#include <future>
#include <memory>

using namespace taxicore;
using namespace taxicore::test;

namespace {

constexpr int kBurst = 3;
constexpr double kRatePerMinute = 30; // one more booking every 2 s
// Far above SharedBookingLimiter::kRedisTimeoutMs plus the client's sweep: a loaded machine.
constexpr int kDecisionTimeoutMs = 5000;

// One node: its region (the local buckets, the event log) and its limiter.
struct Node {
    std::unique_ptr<SharedRegion> region;
    std::unique_ptr<SharedMemoryFleet> fleet;
    std::unique_ptr<SharedBookingLimiter> limiter;
    ControlBlock &control() const { return fleet->control(); }
};

struct Decision {
    bool decided = false;
    bool atOnce = false;      // answered by take() itself (the local buckets)
    bool otherThread = false; // `later` ran on a thread other than the caller's
    int retryAfterS = -1;
    qint64 elapsedMs = 0;
};

Decision takeAndWait(SharedBookingLimiter &limiter, const QHostAddress &client)
{
    QElapsedTimer timer;
    timer.start();
    auto promise = std::make_shared<std::promise<std::pair<int, QThread *>>>();
    auto future = promise->get_future();
    const std::optional<int> now = limiter.take(client, [promise](int after) {
        promise->set_value({after, QThread::currentThread()});
    });
    Decision decision;
    if (now) {
        decision = {true, true, false, *now, timer.elapsed()};
        return decision;
    }
    if (future.wait_for(std::chrono::milliseconds(kDecisionTimeoutMs)) != std::future_status::ready)
        return decision;
    const auto [after, thread] = future.get();
    return {true, false, thread != QThread::currentThread(), after, timer.elapsed()};
}

int rateLimitEvents(const Node &node, const QString &containing)
{
    int count = 0;
    for (const QJsonValue event : EventLog(node.control()).newest(64)) {
        const QJsonObject e = event.toObject();
        count += e.value(QStringLiteral("kind")).toString() == QStringLiteral("rate_limit")
                 && e.value(QStringLiteral("text")).toString().contains(containing);
    }
    return count;
}

} // namespace

class ClusterSharedBookingBucketTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void twoNodesTakeFromOneBucket();
    void theKeyIsPerAddress();
    void anIdleBucketExpiresOnceFull();
    void aFlushedScriptCacheIsSentAgain();
    void aStuckRedisLeavesTheDecisionToTheNodeWithinTheBound();
    void aStoppedRedisIsNotWaitedForAndIsUsedAgainWhenBack();

private:
    Node startNode();

    RedisKit m_redis;
    std::vector<Node> m_nodes;
};

void ClusterSharedBookingBucketTest::initTestCase()
{
    TC_REQUIRE_TOOL(!RedisKit::program().isEmpty(), "redis-server is not installed (package redis-server)");
    QString error;
    QVERIFY2(m_redis.start({}, &error), qPrintable(error));
}

Node ClusterSharedBookingBucketTest::startNode()
{
    Node node;
    QString error;
    node.region = SharedRegion::create(error);
    if (!node.region)
        qFatal("no region: %s", qPrintable(error));
    node.fleet = std::make_unique<SharedMemoryFleet>(*node.region);
    node.control().access.bookingBurst = kBurst;
    node.control().access.bookingRatePerMinute = kRatePerMinute;
    node.limiter =
        std::make_unique<SharedBookingLimiter>(node.control(), *redis::parseRedisUrl(m_redis.url(), nullptr));
    return node;
}

void ClusterSharedBookingBucketTest::init()
{
    if (!m_redis.isRunning()) {
        QString error;
        QVERIFY2(m_redis.restart(&error), qPrintable(error));
    }
    QVERIFY(m_redis.flushAll());
    m_nodes.push_back(startNode());
    m_nodes.push_back(startNode());
}

void ClusterSharedBookingBucketTest::cleanup()
{
    m_nodes.clear();
}

// Takes alternate between the nodes: one burst in all, then the Retry-After BookingRateLimiter
// gives at the same point (an empty bucket at 30 a minute: 2 s), decided off the caller's thread.
void ClusterSharedBookingBucketTest::twoNodesTakeFromOneBucket()
{
    const QHostAddress client(QStringLiteral("203.0.113.9"));
    for (int i = 0; i < kBurst; ++i) {
        const Decision d = takeAndWait(*m_nodes[std::size_t(i % 2)].limiter, client);
        QVERIFY2(d.decided && !d.atOnce && d.otherThread, qPrintable(QString::number(i)));
        QCOMPARE(d.retryAfterS, 0);
    }
    const Decision refused = takeAndWait(*m_nodes[1].limiter, client);
    QVERIFY(refused.decided && !refused.atOnce);
    QCOMPARE(refused.retryAfterS, 2);
    QCOMPARE(takeAndWait(*m_nodes[0].limiter, client).retryAfterS, 2);

    // The same sequence on one node's own buckets answers the same.
    BookingRateLimiter local(m_nodes[0].control().access);
    for (int i = 0; i < kBurst; ++i)
        QCOMPARE(local.take(client, 1000), 0);
    QCOMPARE(local.take(client, 1000), 2);

    for (const Node &node : m_nodes) {
        QVERIFY(node.limiter->isShared());
        QCOMPARE(rateLimitEvents(node, {}), 0);
    }
}

void ClusterSharedBookingBucketTest::theKeyIsPerAddress()
{
    QCOMPARE(SharedBookingLimiter::keyOf(QHostAddress(QStringLiteral("203.0.113.9"))),
             QByteArray("taxicore:rate:203.0.113.9"));
    // An IPv4 client seen through an IPv6 socket is the same client.
    QCOMPARE(SharedBookingLimiter::keyOf(QHostAddress(QStringLiteral("::ffff:203.0.113.9"))),
             QByteArray("taxicore:rate:203.0.113.9"));
    QCOMPARE(SharedBookingLimiter::keyOf(QHostAddress(QStringLiteral("2001:db8::1"))),
             QByteArray("taxicore:rate:2001:db8::1"));
    for (int i = 0; i < kBurst; ++i)
        QCOMPARE(takeAndWait(*m_nodes[0].limiter, QHostAddress(QStringLiteral("2001:db8::1"))).retryAfterS, 0);
    QVERIFY(takeAndWait(*m_nodes[1].limiter, QHostAddress(QStringLiteral("2001:db8::1"))).retryAfterS > 0);
    QCOMPARE(takeAndWait(*m_nodes[1].limiter, QHostAddress(QStringLiteral("2001:db8::2"))).retryAfterS, 0);
}

// An empty bucket refills in burst / rate (6 s here): the key lives no longer than that and a second.
void ClusterSharedBookingBucketTest::anIdleBucketExpiresOnceFull()
{
    QCOMPARE(takeAndWait(*m_nodes[0].limiter, QHostAddress(QStringLiteral("198.51.100.1"))).retryAfterS, 0);
    const QByteArray ttl = m_redis.rawCommand("PTTL taxicore:rate:198.51.100.1");
    const int ms = ttl.mid(1).trimmed().toInt();
    QVERIFY2(ttl.startsWith(':') && ms > 0
                 && ms <= int(kBurst * 60'000 / kRatePerMinute) + SharedBookingLimiter::kIdleSlackMs,
             ttl.constData());
}

// Redis restarted or SCRIPT FLUSH: EVALSHA gets NOSCRIPT, the script goes again, Redis still decides.
void ClusterSharedBookingBucketTest::aFlushedScriptCacheIsSentAgain()
{
    const QHostAddress client(QStringLiteral("198.51.100.2"));
    QCOMPARE(takeAndWait(*m_nodes[0].limiter, client).retryAfterS, 0);
    QCOMPARE(m_redis.rawCommand("SCRIPT FLUSH"), QByteArray("+OK"));
    for (int i = 1; i < kBurst; ++i)
        QCOMPARE(takeAndWait(*m_nodes[i % 2].limiter, client).retryAfterS, 0);
    const Decision refused = takeAndWait(*m_nodes[0].limiter, client);
    QVERIFY(!refused.atOnce);
    QVERIFY(refused.retryAfterS > 0); // the shared bucket, not a fresh local one
    QVERIFY(m_nodes[0].limiter->isShared() && m_nodes[1].limiter->isShared());
}

// SIGSTOP: connected, but no answer. The node's own bucket decides within the bound (250 ms and
// the client's sweep), the switch is logged once however many bookings wait, and the first answer
// from Redis after SIGCONT switches back.
void ClusterSharedBookingBucketTest::aStuckRedisLeavesTheDecisionToTheNodeWithinTheBound()
{
    const QHostAddress client(QStringLiteral("198.51.100.3"));
    QCOMPARE(takeAndWait(*m_nodes[0].limiter, client).retryAfterS, 0);
    QVERIFY(m_redis.pause());
    const Decision first = takeAndWait(*m_nodes[0].limiter, client);
    QVERIFY(m_redis.resume());
    QVERIFY2(first.decided, "no decision while Redis was stuck");
    qInfo() << "decided without Redis after" << first.elapsedMs << "ms";
    QVERIFY2(first.elapsedMs >= SharedBookingLimiter::kRedisTimeoutMs / 2 && first.elapsedMs < 2000,
             qPrintable(QString::number(first.elapsedMs)));
    QCOMPARE(first.retryAfterS, 0); // the node's own bucket for this client was full
    QVERIFY(!m_nodes[0].limiter->isShared());
    QCOMPARE(rateLimitEvents(m_nodes[0], QStringLiteral("own buckets")), 1);

    // Back: the client reconnects by itself, and Redis decides again (once connected, take defers).
    QVERIFY2(waitUntil(
                 [&] {
                     const Decision d = takeAndWait(*m_nodes[0].limiter, QHostAddress(QStringLiteral("192.0.2.1")));
                     return d.decided && !d.atOnce && m_nodes[0].limiter->isShared();
                 },
                 10'000),
             "Redis did not decide again after SIGCONT");
    QCOMPARE(rateLimitEvents(m_nodes[0], QStringLiteral("own buckets")), 1);
    QCOMPARE(rateLimitEvents(m_nodes[0], QStringLiteral("again")), 1);
}

// Stopped: once the client noticed, take() answers at once from the node's own buckets (a
// booking does not wait out the timeout each time), limited per node, never unlimited.
void ClusterSharedBookingBucketTest::aStoppedRedisIsNotWaitedForAndIsUsedAgainWhenBack()
{
    QVERIFY(m_redis.stop());
    const QHostAddress client(QStringLiteral("198.51.100.4"));
    int allowed = 0;
    QVERIFY2(waitUntil(
                 [&] {
                     const Decision d = takeAndWait(*m_nodes[0].limiter, client);
                     allowed += d.retryAfterS == 0;
                     return d.atOnce;
                 },
                 5000),
             "take() still waits for a stopped Redis");
    for (int i = 0; i < kBurst + 2; ++i) {
        const Decision d = takeAndWait(*m_nodes[0].limiter, client);
        QVERIFY(d.atOnce);
        allowed += d.retryAfterS == 0;
    }
    QCOMPARE(allowed, kBurst);
    QCOMPARE(rateLimitEvents(m_nodes[0], QStringLiteral("own buckets")), 1);

    QString error;
    QVERIFY2(m_redis.restart(&error), qPrintable(error));
    QVERIFY2(waitUntil(
                 [&] {
                     const Decision d = takeAndWait(*m_nodes[0].limiter, QHostAddress(QStringLiteral("192.0.2.2")));
                     return d.decided && !d.atOnce && m_nodes[0].limiter->isShared();
                 },
                 10'000),
             "Redis does not decide again after its restart");
    QVERIFY(m_nodes[0].limiter->isShared());
    QCOMPARE(rateLimitEvents(m_nodes[0], QStringLiteral("again")), 1);
}

QTEST_GUILESS_MAIN(ClusterSharedBookingBucketTest)
#include "cluster_shared_booking_bucket_test.moc"
