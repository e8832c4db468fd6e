// taxicore_redis against a real redis-server (tests/support/RedisKit.h): URLs, every reply type,
// pipelining in order, pub/sub delivery and its latency, and what happens when Redis stops,
// hangs or restarts: Error replies within the command timeout, a bounded queue, reconnection by
// itself, and a destructor that never waits on Redis.

#include "RedisKit.h"
#include "RequireTool.h"
#include "Wait.h"

#include "redis/RedisClient.h"
#include "redis/RedisEndpoint.h"
#include "redis/RedisSubscriber.h"

#include <QElapsedTimer>
#include <QTest>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <vector>

using namespace taxicore::redis;
using taxicore::test::RedisKit;
using taxicore::test::waitUntil;

namespace {

constexpr int kWaitMs = 10000; // upper bound for anything that should take milliseconds

// Small timeouts so failures show quickly; the slack covers the sweep interval and a loaded machine.
constexpr int kShortCommandTimeoutMs = 300;
constexpr int kTimeoutSlackMs = 400;

RedisEndpoint endpointOf(const RedisKit &kit)
{
    QString error;
    const auto endpoint = parseRedisUrl(kit.url(), &error);
    return endpoint.value_or(RedisEndpoint{});
}

RedisClientOptions shortOptions()
{
    RedisClientOptions options;
    options.commandTimeoutMs = kShortCommandTimeoutMs;
    options.reconnectMinMs = 50;
    options.reconnectMaxMs = 200;
    options.pingIntervalMs = 200;
    options.pingDeadlineMs = 300;
    return options;
}

qint64 steadyNs()
{
    using namespace std::chrono;
    return duration_cast<nanoseconds>(steady_clock::now().time_since_epoch()).count();
}

// Collects replies answered on the client's thread, for the test thread to read.
struct Replies {
    std::mutex mutex;
    std::vector<RedisReply> replies;
    std::vector<qint64> elapsedMs;
    QElapsedTimer clock;
    Replies() { clock.start(); }

    RedisClient::Done collector()
    {
        return [this](const RedisReply &reply) {
            std::lock_guard lock(mutex);
            replies.push_back(reply);
            elapsedMs.push_back(clock.elapsed());
        };
    }
    size_t count()
    {
        std::lock_guard lock(mutex);
        return replies.size();
    }
};

// Messages a subscriber received, and how many times it (re)subscribed.
struct Inbox {
    std::mutex mutex;
    std::vector<QByteArray> payloads;
    std::vector<qint64> latencyNs;
    std::atomic<int> subscribed{0};

    RedisSubscriber::MessageFn onMessage()
    {
        return [this](const QByteArray &, const QByteArray &payload) {
            const qint64 now = steadyNs();
            std::lock_guard lock(mutex);
            payloads.push_back(payload);
            latencyNs.push_back(now - payload.toLongLong());
        };
    }
    std::function<void()> onSubscribed()
    {
        return [this] { ++subscribed; };
    }
    size_t count()
    {
        std::lock_guard lock(mutex);
        return payloads.size();
    }
};

} // namespace

class RedisClientTest : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        TC_REQUIRE_TOOL(!RedisKit::program().isEmpty(),
                        "redis-server not found (apt-get install redis-server, or scripts/install-deps.sh)");
        QString error;
        QVERIFY2(m_redis.start({}, &error), qPrintable(error));
    }

    // Every test starts with a running, answering, empty Redis, whatever the previous one did.
    void init()
    {
        if (!m_redis.isRunning()) {
            QString error;
            QVERIFY2(m_redis.restart(&error), qPrintable(error));
        }
        m_redis.resume();
        QVERIFY(m_redis.flushAll());
    }

    void parsesUrls_data()
    {
        QTest::addColumn<QString>("url");
        QTest::addColumn<QString>("host");
        QTest::addColumn<int>("port");
        QTest::addColumn<int>("db");
        QTest::addColumn<QString>("user");
        QTest::addColumn<QString>("password");
        QTest::addColumn<QString>("display");
        QTest::newRow("host only") << "redis://cache.local"
                                   << "cache.local" << 6379 << 0 << ""
                                   << ""
                                   << "cache.local:6379";
        QTest::newRow("port and db") << "redis://10.0.0.5:6380/2"
                                     << "10.0.0.5" << 6380 << 2 << ""
                                     << ""
                                     << "10.0.0.5:6380/2";
        QTest::newRow("password") << "redis://:s3cret@127.0.0.1:7000"
                                  << "127.0.0.1" << 7000 << 0 << ""
                                  << "s3cret"
                                  << "127.0.0.1:7000";
        QTest::newRow("user and password") << "redis://taxi:p%40ss@host/15"
                                           << "host" << 6379 << 15 << "taxi"
                                           << "p@ss"
                                           << "host:6379/15";
        QTest::newRow("ipv6") << "redis://[::1]:6390"
                              << "::1" << 6390 << 0 << ""
                              << ""
                              << "[::1]:6390";
        QTest::newRow("upper-case scheme, trailing slash") << "REDIS://h:1/"
                                                           << "h" << 1 << 0 << ""
                                                           << ""
                                                           << "h:1";
    }
    void parsesUrls()
    {
        QFETCH(QString, url);
        QString error;
        const auto endpoint = parseRedisUrl(url, &error);
        QVERIFY2(endpoint, qPrintable(error));
        QTEST(endpoint->host, "host");
        QTEST(endpoint->port, "port");
        QTEST(endpoint->db, "db");
        QTEST(endpoint->user, "user");
        QTEST(endpoint->password, "password");
        QTEST(endpoint->display(), "display");
        QVERIFY(!endpoint->display().contains(QStringLiteral("s3cret")));
    }

    void refusesBadUrls_data()
    {
        QTest::addColumn<QString>("url");
        QTest::addColumn<QString>("named"); // what the error must mention
        QTest::newRow("empty") << ""
                               << "empty";
        QTest::newRow("other scheme") << "http://host:6379"
                                      << "redis://";
        QTest::newRow("tls") << "rediss://host"
                             << "redis://";
        QTest::newRow("no host") << "redis://:6379"
                                 << "host";
        QTest::newRow("port not a number") << "redis://host:abc"
                                           << "port";
        QTest::newRow("port zero") << "redis://host:0"
                                   << "port";
        QTest::newRow("port too big") << "redis://host:70000"
                                      << "port";
        QTest::newRow("db not a number") << "redis://host/cars"
                                         << "database";
        QTest::newRow("db too big") << "redis://host/16"
                                    << "database";
        QTest::newRow("user without password") << "redis://taxi@host"
                                               << "password";
        QTest::newRow("query") << "redis://host?db=1"
                               << "query";
    }
    void refusesBadUrls()
    {
        QFETCH(QString, url);
        QFETCH(QString, named);
        QString error;
        QVERIFY(!parseRedisUrl(url, &error));
        QVERIFY2(error.contains(named, Qt::CaseInsensitive), qPrintable(error));
    }

    void answersEveryReplyType()
    {
        RedisClient client(endpointOf(m_redis));
        const RedisReply status = client.commandAndWait({"SET", "tc:key", "value"}, kWaitMs);
        QCOMPARE(status.type, RedisReply::Type::Status);
        QCOMPARE(status.text, QByteArray("OK"));
        const RedisReply string = client.commandAndWait({"GET", "tc:key"}, kWaitMs);
        QCOMPARE(string.type, RedisReply::Type::String);
        QCOMPARE(string.text, QByteArray("value"));
        const RedisReply binary = client.commandAndWait({"SET", "tc:bin", QByteArray("a\0b\r\n", 5)}, kWaitMs);
        QVERIFY(binary.ok());
        QCOMPARE(client.commandAndWait({"GET", "tc:bin"}, kWaitMs).text, QByteArray("a\0b\r\n", 5));
        const RedisReply nil = client.commandAndWait({"GET", "tc:missing"}, kWaitMs);
        QCOMPARE(nil.type, RedisReply::Type::Nil);
        const RedisReply integer = client.commandAndWait({"INCRBY", "tc:n", "41"}, kWaitMs);
        QCOMPARE(integer.type, RedisReply::Type::Integer);
        QCOMPARE(integer.integer, 41);
        QVERIFY(client.commandAndWait({"RPUSH", "tc:list", "a", "b"}, kWaitMs).ok());
        const RedisReply array = client.commandAndWait({"LRANGE", "tc:list", "0", "-1"}, kWaitMs);
        QCOMPARE(array.type, RedisReply::Type::Array);
        QCOMPARE(array.elements.size(), size_t(2));
        QCOMPARE(array.elements[1].text, QByteArray("b"));
        const RedisReply error = client.commandAndWait({"NOSUCHCOMMAND"}, kWaitMs);
        QCOMPARE(error.type, RedisReply::Type::Error);
        QVERIFY2(error.text.contains("unknown command"), error.text.constData());
        QVERIFY(!error.ok());
        // Commands that would take the connection over are refused, not sent.
        const RedisReply subscribe = client.commandAndWait({"SUBSCRIBE", "x"}, kWaitMs);
        QVERIFY2(!subscribe.ok() && subscribe.text.contains("RedisSubscriber"), subscribe.text.constData());
        QVERIFY(client.isConnected());
    }

    void selectsTheDatabaseOfTheUrl()
    {
        QString error;
        const auto db3 = parseRedisUrl(m_redis.url() + QStringLiteral("/3"), &error);
        QVERIFY2(db3, qPrintable(error));
        RedisClient client3(*db3);
        RedisClient client0(endpointOf(m_redis));
        QVERIFY(client3.commandAndWait({"SET", "tc:where", "three"}, kWaitMs).ok());
        QCOMPARE(client3.commandAndWait({"GET", "tc:where"}, kWaitMs).text, QByteArray("three"));
        QCOMPARE(client0.commandAndWait({"GET", "tc:where"}, kWaitMs).type, RedisReply::Type::Nil);
    }

    void logsInWithThePasswordOfTheUrl()
    {
        RedisKit secured;
        QString error;
        QVERIFY2(secured.start({QStringLiteral("--requirepass"), QStringLiteral("s3cret")}, &error), qPrintable(error));
        const auto good = parseRedisUrl(QStringLiteral("redis://:s3cret@127.0.0.1:%1").arg(secured.port()), &error);
        RedisClient client(*good);
        QVERIFY(client.commandAndWait({"SET", "tc:k", "v"}, kWaitMs).ok());

        // A wrong password: commands wait, then fail naming the refusal; nothing hangs.
        const auto bad = parseRedisUrl(QStringLiteral("redis://:wrong@127.0.0.1:%1").arg(secured.port()), &error);
        RedisClient refused(*bad, shortOptions());
        const RedisReply reply = refused.commandAndWait({"GET", "tc:k"}, kWaitMs);
        QVERIFY(!reply.ok());
        QVERIFY2(reply.text.contains("login refused") && reply.text.contains("is unavailable"), reply.text.constData());
        QVERIFY(!refused.isConnected());
    }

    void pipelinesTenThousandCommandsInOrder()
    {
        constexpr int kCommands = 10000;
        RedisClient client(endpointOf(m_redis));
        QVERIFY(client.commandAndWait({"PING"}, kWaitMs).ok());
        std::vector<long long> seen;
        seen.reserve(kCommands);
        std::atomic<int> answered{0};
        QElapsedTimer clock;
        clock.start();
        for (int i = 0; i < kCommands; ++i)
            client.command({"INCR", "tc:counter"}, [&](const RedisReply &reply) {
                seen.push_back(reply.ok() ? reply.integer : -1); // only the client's thread writes
                ++answered;
            });
        QVERIFY(waitUntil([&] { return answered == kCommands; }, kWaitMs, 1));
        const qint64 elapsedUs = std::max<qint64>(1, clock.nsecsElapsed() / 1000);
        qInfo("%d pipelined INCR in %.1f ms: %.0f commands/s", kCommands, elapsedUs / 1000.0,
              kCommands * 1e6 / double(elapsedUs));
        for (int i = 0; i < kCommands; ++i)
            QCOMPARE(seen[size_t(i)], i + 1); // the i-th reply is the i-th INCR's
        QCOMPARE(client.stats().sent, std::uint64_t(kCommands + 1));
        QCOMPARE(client.stats().failed, std::uint64_t(0));
    }

    void publishReachesSubscriber()
    {
        constexpr int kMessages = 2000;
        Inbox inbox;
        // PINGs every 20 ms interleave with the messages: hiredis 0.14 hands a message that arrives
        // before a PING's answer to the PING's callback; none may be lost, nor the connection dropped.
        RedisClientOptions pingOften;
        pingOften.pingIntervalMs = 20;
        RedisSubscriber subscriber(endpointOf(m_redis), {"tc:feed", "tc:other"}, inbox.onMessage(),
                                   inbox.onSubscribed(), pingOften);
        QVERIFY(waitUntil([&] { return subscriber.isSubscribed(); }, kWaitMs));
        QCOMPARE(inbox.subscribed.load(), 1);
        RedisClient publisher(endpointOf(m_redis));
        QVERIFY(publisher.commandAndWait({"PING"}, kWaitMs).ok());
        // Paced, one message every 200 µs, so the figure is delivery latency and not a queue.
        for (int i = 0; i < kMessages; ++i) {
            publisher.command({"PUBLISH", "tc:feed", QByteArray::number(steadyNs())});
            QThread::usleep(200);
        }
        QVERIFY(waitUntil([&] { return inbox.count() == size_t(kMessages); }, kWaitMs));
        std::vector<qint64> latency;
        {
            std::lock_guard lock(inbox.mutex);
            QVERIFY(std::is_sorted(
                inbox.payloads.begin(), inbox.payloads.end(),
                [](const QByteArray &a, const QByteArray &b) { return a.toLongLong() < b.toLongLong(); }));
            latency = inbox.latencyNs;
        }
        std::sort(latency.begin(), latency.end());
        const double p50 = latency[latency.size() / 2] / 1e6;
        const double p99 = latency[latency.size() * 99 / 100] / 1e6;
        qInfo("publish -> subscriber: %d messages, p50 %.3f ms, p99 %.3f ms, max %.3f ms", kMessages, p50, p99,
              latency.back() / 1e6);
        // Generous for a loaded 2-core machine; a delivery that waits for a timer would miss it.
        QVERIFY2(p50 < 20.0, qPrintable(QStringLiteral("p50 %1 ms").arg(p50)));
        QCOMPARE(inbox.subscribed.load(), 1);
    }

    // Nothing published for many PING deadlines: the PINGs' answers must keep it subscribed, not
    // a resubscribe (and a snapshot reload by the owner) every interval + deadline.
    void idleSubscriberStaysSubscribed()
    {
        RedisClientOptions options = shortOptions();
        options.pingIntervalMs = 100;
        options.pingDeadlineMs = 200;
        Inbox inbox;
        RedisSubscriber subscriber(endpointOf(m_redis), {"tc:quiet"}, inbox.onMessage(), inbox.onSubscribed(), options);
        QVERIFY(waitUntil([&] { return subscriber.isSubscribed(); }, kWaitMs));
        QTest::qWait(10 * (options.pingIntervalMs + options.pingDeadlineMs));
        QVERIFY(subscriber.isSubscribed());
        QCOMPARE(inbox.subscribed.load(), 1);
        QCOMPARE(subscriber.resubscribes(), std::uint64_t(0));
    }

    void stoppedRedisFailsCommandsWithinTheTimeout()
    {
        RedisClientOptions options = shortOptions();
        options.maxQueued = 50;
        RedisClient client(endpointOf(m_redis), options);
        QVERIFY(client.commandAndWait({"PING"}, kWaitMs).ok());
        QVERIFY(m_redis.stop());
        QVERIFY(waitUntil([&] { return !client.isConnected(); }, kWaitMs));

        Replies replies;
        for (int i = 0; i < 20; ++i)
            client.command({"GET", "tc:key"}, replies.collector());
        QVERIFY(waitUntil([&] { return replies.count() == 20; }, kWaitMs));
        for (size_t i = 0; i < 20; ++i) {
            QVERIFY(!replies.replies[i].ok());
            QVERIFY2(replies.replies[i].text.startsWith("redis 127.0.0.1:")
                         && replies.replies[i].text.contains("is unavailable"),
                     replies.replies[i].text.constData());
            QVERIFY2(replies.elapsedMs[i] >= kShortCommandTimeoutMs - 50
                         && replies.elapsedMs[i] <= kShortCommandTimeoutMs + kTimeoutSlackMs,
                     qPrintable(QStringLiteral("answered after %1 ms").arg(replies.elapsedMs[i])));
        }
        QCOMPARE(client.stats().failed, std::uint64_t(20));

        // The bound: 50 wait, the next 30 are refused at once, without waiting for the timeout.
        Replies bounded;
        for (int i = 0; i < 80; ++i)
            client.command({"GET", "tc:key"}, bounded.collector());
        QVERIFY(waitUntil([&] { return bounded.count() >= 30; }, kShortCommandTimeoutMs / 2, 1));
        {
            std::lock_guard lock(bounded.mutex);
            for (size_t i = 0; i < 30; ++i)
                QVERIFY2(bounded.replies[i].text.contains("overloaded"), bounded.replies[i].text.constData());
        }
        QCOMPARE(client.stats().dropped, std::uint64_t(30));
        QVERIFY(waitUntil([&] { return bounded.count() == 80; }, kWaitMs));

        // commandAndWait while Redis is away: an Error within the command timeout, no hang.
        QElapsedTimer clock;
        clock.start();
        QVERIFY(!client.commandAndWait({"GET", "tc:key"}, kWaitMs).ok());
        QVERIFY(clock.elapsed() <= kShortCommandTimeoutMs + kTimeoutSlackMs);
    }

    void stuckRedisTimesOutAndSubscriberNotices()
    {
        RedisClient client(endpointOf(m_redis), shortOptions());
        Inbox inbox;
        RedisSubscriber subscriber(endpointOf(m_redis), {"tc:feed"}, inbox.onMessage(), inbox.onSubscribed(),
                                   shortOptions());
        QVERIFY(client.commandAndWait({"PING"}, kWaitMs).ok());
        QVERIFY(waitUntil([&] { return subscriber.isSubscribed(); }, kWaitMs));

        QVERIFY(m_redis.pause()); // connections stay open, nothing answers
        QElapsedTimer clock;
        clock.start();
        const RedisReply reply = client.commandAndWait({"GET", "tc:key"}, kWaitMs);
        const qint64 elapsed = clock.elapsed();
        QVERIFY2(!reply.ok() && reply.text.contains("timed out after"), reply.text.constData());
        QVERIFY2(elapsed <= kShortCommandTimeoutMs + kTimeoutSlackMs, qPrintable(QString::number(elapsed)));
        // The subscriber's PING goes unanswered: it drops the connection by itself.
        QVERIFY(waitUntil([&] { return !subscriber.isSubscribed(); }, kWaitMs));

        QVERIFY(m_redis.resume());
        QVERIFY(waitUntil([&] { return subscriber.isSubscribed() && inbox.subscribed == 2; }, kWaitMs));
        QVERIFY(client.commandAndWait({"PING"}, kWaitMs).ok());
        QVERIFY(client.commandAndWait({"PUBLISH", "tc:feed", QByteArray::number(steadyNs())}, kWaitMs).ok());
        QVERIFY(waitUntil([&] { return inbox.count() == 1; }, kWaitMs));
    }

    void restartedRedisReconnectsClientAndSubscriber()
    {
        RedisClient client(endpointOf(m_redis), shortOptions());
        Inbox inbox;
        RedisSubscriber subscriber(endpointOf(m_redis), {"tc:feed"}, inbox.onMessage(), inbox.onSubscribed(),
                                   shortOptions());
        QVERIFY(waitUntil([&] { return subscriber.isSubscribed(); }, kWaitMs));
        QVERIFY(client.commandAndWait({"PUBLISH", "tc:feed", QByteArray::number(steadyNs())}, kWaitMs).ok());
        QVERIFY(waitUntil([&] { return inbox.count() == 1; }, kWaitMs));

        QString error;
        QVERIFY2(m_redis.restart(&error), qPrintable(error));
        // Nobody calls anything: both find the new server by themselves.
        QVERIFY(waitUntil([&] { return client.isConnected() && client.stats().reconnects == 1; }, kWaitMs));
        QVERIFY(waitUntil([&] { return subscriber.isSubscribed() && inbox.subscribed == 2; }, kWaitMs));
        QCOMPARE(subscriber.resubscribes(), std::uint64_t(1));
        QVERIFY(client.commandAndWait({"SET", "tc:key", "again"}, kWaitMs).ok());
        QVERIFY(client.commandAndWait({"PUBLISH", "tc:feed", QByteArray::number(steadyNs())}, kWaitMs).ok());
        QVERIFY(waitUntil([&] { return inbox.count() == 2; }, kWaitMs));
    }

    void destructorWithPendingCommandsReturnsPromptly()
    {
        constexpr int kPending = 200;
        RedisClientOptions patient = shortOptions();
        patient.commandTimeoutMs = 30000; // nothing would time out while we watch
        Replies replies;
        // In flight: sent to a server that does not answer.
        auto inFlight = std::make_unique<RedisClient>(endpointOf(m_redis), patient);
        QVERIFY(inFlight->commandAndWait({"PING"}, kWaitMs).ok());
        QVERIFY(m_redis.pause());
        for (int i = 0; i < kPending; ++i)
            inFlight->command({"GET", "tc:key"}, replies.collector());
        QTest::qWait(50);
        QElapsedTimer clock;
        clock.start();
        inFlight.reset();
        QVERIFY2(clock.elapsed() < 500, qPrintable(QString::number(clock.elapsed())));
        QCOMPARE(replies.count(), size_t(kPending));
        for (const RedisReply &reply : replies.replies)
            QVERIFY2(!reply.ok() && reply.text.contains("closed"), reply.text.constData());

        // Waiting: Redis is gone, commands queue for a connection that does not come.
        QVERIFY(m_redis.stop());
        Replies waiting;
        auto queued = std::make_unique<RedisClient>(endpointOf(m_redis), patient);
        for (int i = 0; i < kPending; ++i)
            queued->command({"GET", "tc:key"}, waiting.collector());
        clock.restart();
        queued.reset();
        QVERIFY2(clock.elapsed() < 500, qPrintable(QString::number(clock.elapsed())));
        QCOMPARE(waiting.count(), size_t(kPending));
    }

private:
    RedisKit m_redis;
};

QTEST_GUILESS_MAIN(RedisClientTest)
#include "redis_client_test.moc"
