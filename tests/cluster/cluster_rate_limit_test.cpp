// The booking rate limit of a cluster (issue 17): two nodes behind nginx share each client's
// bucket in Redis, so a client spread over both nodes gets one --booking-burst, not one per node;
// with Redis gone each node limits on its own (never unlimited, never a 500). Real PostgreSQL,
// redis-server, nginx and taxicore-server processes over loopback.

#include "HttpBatch.h"
#include "NginxKit.h"
#include "PostgresKit.h"
#include "RedisKit.h"
#include "RequireTool.h"
#include "ServerProcess.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>
#include <map>
#include <memory>

using namespace taxicore::test;

namespace {

constexpr int kNodes = 2;
constexpr int kCars = 100;
constexpr int kBurst = 5;
// One booking more every 10 s: a burst of attempts ends long before a token comes back, even on a
// loaded machine (at 60 a minute, one would every second).
constexpr int kRatePerMinute = 6;
constexpr int kAttempts = 12;
constexpr int kBurstTimeoutMs = 60'000;
const QByteArray kAdminToken = QByteArrayLiteral("cluster-rate-test-admin-token-0123");

// What kAttempts bookings of one client (the X-Forwarded-For address nginx passes on) came to.
struct Outcome {
    int allowed = 0; // booked (201) or let through and refused for want of a car (409)
    int booked = 0;
    int limited = 0; // 429 with a Retry-After
    QStringList other;
    QString summary() const
    {
        return QStringLiteral("%1 allowed, %2 limited, other: [%3]").arg(allowed).arg(limited).arg(other.join("; "));
    }
};

} // namespace

class ClusterRateLimitTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void oneClientGetsOneBurstAcrossTheNodes();
    void anotherClientHasABucketOfItsOwn();
    void withRedisDownEachNodeLimitsOnItsOwn();
    void cleanupTestCase();

private:
    Outcome bookFrom(const QByteArray &clientAddress);
    int bookingsServedBy(const ServerProcess &node);
    QJsonArray rateLimitEvents(const ServerProcess &node);

    PostgresKit m_postgres;
    RedisKit m_redis;
    std::vector<std::unique_ptr<ServerProcess>> m_nodes;
    std::unique_ptr<NginxProcess> m_nginx;
};

void ClusterRateLimitTest::initTestCase()
{
    TC_REQUIRE_TOOL(!PostgresKit::binDir().isEmpty(), "PostgreSQL is not installed (package postgresql)");
    TC_REQUIRE_TOOL(!RedisKit::program().isEmpty(), "redis-server is not installed (package redis-server)");
    TC_REQUIRE_TOOL(!NginxProcess::program().isEmpty(), "nginx is not installed (package nginx-light)");
    QVERIFY2(m_postgres.start(), qPrintable(m_postgres.error()));
    QString error;
    QVERIFY2(m_redis.start({}, &error), qPrintable(error));
    QList<quint16> ports;
    for (int i = 0; i < kNodes; ++i) {
        // The second node serves through worker processes: each has its own connection to the buckets.
        const QString mode = i == 0 ? QStringLiteral("single") : QStringLiteral("processes");
        auto node = std::make_unique<ServerProcess>(
            QStringList{QStringLiteral("--mode"),           mode,
                        QStringLiteral("--workers"),        QStringLiteral("2"),
                        QStringLiteral("--cars"),           QString::number(kCars),
                        QStringLiteral("--ledger"),         m_postgres.url(),
                        QStringLiteral("--fleet"),          m_redis.url(),
                        QStringLiteral("--demand-rate"),    QStringLiteral("0"),
                        QStringLiteral("--trusted-proxy"),  QStringLiteral("127.0.0.1/32"),
                        QStringLiteral("--trust-loopback"), QStringLiteral("off"),
                        QStringLiteral("--admin-token"),    QString::fromLatin1(kAdminToken),
                        QStringLiteral("--booking-burst"),  QString::number(kBurst),
                        QStringLiteral("--booking-rate"),   QString::number(kRatePerMinute)});
        QVERIFY2(node->start(30'000), qPrintable(node->error() + QString::fromLocal8Bit(node->stderrText())));
        ports << node->port();
        m_nodes.push_back(std::move(node));
    }
    m_nginx = std::make_unique<NginxProcess>(ports);
    QVERIFY2(m_nginx->start(), qPrintable(m_nginx->error()));
}

// nginx appends its peer (this test, 127.0.0.1) to the X-Forwarded-For it is sent; the nodes trust
// only 127.0.0.1, so the rightmost entry not trusted, `clientAddress`, is the client.
Outcome ClusterRateLimitTest::bookFrom(const QByteArray &clientAddress)
{
    QList<QByteArray> requests;
    for (QByteArray request : bookingBurst(kAttempts)) {
        const int headersEnd = request.indexOf("\r\n") + 2;
        request.insert(headersEnd, "X-Forwarded-For: " + clientAddress + "\r\n");
        requests << request;
    }
    Outcome outcome;
    for (const HttpResponse &answer : sendConcurrently(m_nginx->host(), m_nginx->port(), requests, kBurstTimeoutMs)) {
        if (answer.status == 201 || answer.status == 409) {
            ++outcome.allowed;
            outcome.booked += answer.status == 201;
        } else if (answer.status == 429 && answer.header("Retry-After").toInt() >= 1
                   && answer.json().value(QStringLiteral("retry_after_s")).toInt()
                          == answer.header("Retry-After").toInt()) {
            ++outcome.limited;
        } else {
            outcome.other << QString::fromUtf8(answer.describe());
        }
    }
    return outcome;
}

int ClusterRateLimitTest::bookingsServedBy(const ServerProcess &node)
{
    HttpClient client(node.host(), node.port());
    const QByteArray prefix = "taxicore_http_requests_total{route=\"POST /api/v1/bookings\",";
    int served = 0;
    for (const QByteArray &line : client.get("/metrics").body.split('\n'))
        if (line.startsWith(prefix))
            served += line.mid(line.lastIndexOf(' ') + 1).toInt();
    return served;
}

QJsonArray ClusterRateLimitTest::rateLimitEvents(const ServerProcess &node)
{
    HttpClient client(node.host(), node.port());
    const HttpResponse events =
        client.request("GET", "/admin/v1/events", {}, {{"Authorization", "Bearer " + kAdminToken}});
    QJsonArray found;
    for (const QJsonValue event : events.json().value(QStringLiteral("events")).toArray())
        if (event.toObject().value(QStringLiteral("kind")).toString() == QStringLiteral("rate_limit"))
            found.append(event);
    return found;
}

// One client's bookings through nginx land on both nodes, and only --booking-burst of them pass
// (each node's own bucket would let a burst through on each: 10 of 12).
void ClusterRateLimitTest::oneClientGetsOneBurstAcrossTheNodes()
{
    const Outcome outcome = bookFrom("203.0.113.7");
    qInfo().noquote() << "203.0.113.7:" << outcome.summary();
    QVERIFY2(outcome.other.isEmpty(), qPrintable(outcome.summary()));
    QCOMPARE(outcome.allowed, kBurst);
    QCOMPARE(outcome.limited, kAttempts - kBurst);
    for (const auto &node : m_nodes)
        QVERIFY2(bookingsServedBy(*node) >= kAttempts / 4,
                 qPrintable(QStringLiteral("nginx sent node %1 only %2 of the bookings")
                                .arg(node->port())
                                .arg(bookingsServedBy(*node))));
    // The bucket lives in Redis and goes away once idle (it would be full again by then).
    const QByteArray ttl = m_redis.rawCommand("PTTL taxicore:rate:203.0.113.7");
    QVERIFY2(ttl.startsWith(':') && ttl.mid(1).trimmed().toInt() > 0
                 && ttl.mid(1).trimmed().toInt() <= (kBurst * 60'000 / kRatePerMinute) + 1000,
             ttl.constData());
    for (const auto &node : m_nodes)
        QVERIFY2(rateLimitEvents(*node).isEmpty(), "a node fell back to its own buckets with Redis up");
}

void ClusterRateLimitTest::anotherClientHasABucketOfItsOwn()
{
    const Outcome outcome = bookFrom("198.51.100.23");
    QVERIFY2(outcome.other.isEmpty(), qPrintable(outcome.summary()));
    QCOMPARE(outcome.allowed, kBurst);
    QCOMPARE(outcome.limited, kAttempts - kBurst);
}

// Redis gone: the nodes' own buckets limit (a burst per node at most, never unlimited), no 5xx,
// bookings still go through, and a node says once that it fell back.
void ClusterRateLimitTest::withRedisDownEachNodeLimitsOnItsOwn()
{
    QVERIFY(m_redis.stop());
    const Outcome outcome = bookFrom("192.0.2.44");
    qInfo().noquote() << "192.0.2.44 with Redis down:" << outcome.summary();
    QVERIFY2(outcome.other.isEmpty(), qPrintable(outcome.summary()));
    QVERIFY2(outcome.allowed >= kBurst && outcome.allowed <= kNodes * kBurst, qPrintable(outcome.summary()));
    QCOMPARE(outcome.allowed + outcome.limited, kAttempts);
    QVERIFY2(outcome.booked > 0, qPrintable(outcome.summary()));
    // The single-mode node has one limiter: one event for the whole outage, however many bookings.
    const QJsonArray events = rateLimitEvents(*m_nodes[0]);
    QVERIFY2(events.size() == 1, qPrintable(QString::fromUtf8(QJsonDocument(events).toJson())));
    QVERIFY2(events[0].toObject().value(QStringLiteral("text")).toString().contains(QStringLiteral("own buckets")),
             qPrintable(QString::fromUtf8(QJsonDocument(events).toJson())));
}

void ClusterRateLimitTest::cleanupTestCase()
{
    if (m_nginx)
        m_nginx->stop();
    for (const auto &node : m_nodes)
        node->stop();
    m_redis.stop();
    m_postgres.stop();
}

QTEST_GUILESS_MAIN(ClusterRateLimitTest)
#include "cluster_rate_limit_test.moc"
