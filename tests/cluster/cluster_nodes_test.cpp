// The cluster's node list (issue 17): two TaxiCore nodes on one PostgreSQL and one Redis, real
// processes on loopback ports started by the test, each writing its heartbeat to the directory;
// GET /admin/v1/cluster on one lists both with their mode, health and the one leader, and a node
// killed with SIGKILL turns "stale". A server outside a cluster lists itself alone.

#include "HttpClient.h"
#include "NodeListKit.h"
#include "PostgresKit.h"
#include "RedisKit.h"
#include "RequireTool.h"
#include "ServerProcess.h"
#include "Wait.h"

#include <QElapsedTimer>
#include <QHostInfo>
#include <QJsonArray>
#include <QSysInfo>
#include <QTest>
#include <memory>
#include <signal.h>

using namespace taxicore::test;

namespace {

constexpr int kCars = 20;
// A node is "up" while its heartbeat (every second) is at most 3 s old, "stale" after that: a killed
// node turns stale 3-4 s after it died; the margin is for a loaded 2-core machine.
constexpr int kStaleWithinMs = 8000;
constexpr int kListedWithinMs = 15'000;

int leaders(const QJsonObject &cluster)
{
    int count = 0;
    for (const QJsonValue node : cluster.value(QStringLiteral("nodes")).toArray())
        count += node.toObject().value(QStringLiteral("leader")).toBool();
    return count;
}

} // namespace

class ClusterNodesTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void everyNodeIsListedUpWithItsModeAndOneLeader();
    void aNodeKilledWithSigkillTurnsStale();
    void aNodeThatStopsCleanlyLeavesTheList();
    void aSecondNodeWithATakenNameLeavesTheFirstListed();
    void whileRedisIsAwayANodeListsItselfAndSaysWhy();
    void aServerOutsideAClusterListsItselfAlone();
    void theNodeListNeedsTheAdminToken();
    void aBadNodeNameIsRefusedAtStart();
    void cleanupTestCase();

private:
    std::unique_ptr<ServerProcess> startNode(const QString &name, const QStringList &modeArgs);

    PostgresKit m_postgres;
    RedisKit m_redis;
    std::unique_ptr<ServerProcess> m_first;
    std::unique_ptr<ServerProcess> m_second;
};

std::unique_ptr<ServerProcess> ClusterNodesTest::startNode(const QString &name, const QStringList &modeArgs)
{
    auto node = std::make_unique<ServerProcess>(
        QStringList{QStringLiteral("--node-name"), name, QStringLiteral("--cars"), QString::number(kCars),
                    QStringLiteral("--ledger"), m_postgres.url(), QStringLiteral("--fleet"), m_redis.url(),
                    QStringLiteral("--demand-rate"), QStringLiteral("0")}
        + modeArgs);
    if (!node->start(30'000))
        qWarning().noquote() << "node did not start:" << node->error() << node->stderrText();
    return node;
}

void ClusterNodesTest::initTestCase()
{
    TC_REQUIRE_TOOL(!PostgresKit::binDir().isEmpty(), "PostgreSQL is not installed (package postgresql)");
    TC_REQUIRE_TOOL(!RedisKit::program().isEmpty(), "redis-server is not installed (package redis-server)");
    QVERIFY2(m_postgres.start(), qPrintable(m_postgres.error()));
    QString error;
    QVERIFY2(m_redis.start({}, &error), qPrintable(error));
    m_first = startNode(QStringLiteral("node-one"), {QStringLiteral("--mode"), QStringLiteral("single")});
    QVERIFY2(m_first->isRunning(), qPrintable(m_first->stderrText()));
    // Node two in processes mode: its worker processes answer /admin/v1/cluster from the directory.
    m_second = startNode(QStringLiteral("node-two"), {QStringLiteral("--mode"), QStringLiteral("processes"),
                                                      QStringLiteral("--workers"), QStringLiteral("2")});
    QVERIFY2(m_second->isRunning(), qPrintable(m_second->stderrText()));
}

// Each node's heartbeat reaches the directory: node one lists itself and node two, both "up",
// each with the mode it runs and the address it listens on, and exactly one of them leads.
void ClusterNodesTest::everyNodeIsListedUpWithItsModeAndOneLeader()
{
    QJsonObject cluster;
    const bool listed = waitUntil(
        [&] {
            cluster = clusterOf(*m_first);
            return cluster.value(QStringLiteral("nodes")).toArray().size() == 2 && leaders(cluster) == 1;
        },
        kListedWithinMs);
    QVERIFY2(listed, QJsonDocument(cluster).toJson().constData());
    QCOMPARE(cluster.value(QStringLiteral("cluster")).toBool(), true);

    const QJsonObject one = nodeNamed(cluster, QStringLiteral("node-one"));
    const QJsonObject two = nodeNamed(cluster, QStringLiteral("node-two"));
    QCOMPARE(one.value(QStringLiteral("mode")).toString(), QStringLiteral("single"));
    QCOMPARE(two.value(QStringLiteral("mode")).toString(), QStringLiteral("processes"));
    QCOMPARE(two.value(QStringLiteral("workers")).toInt(), 2);
    QCOMPARE(one.value(QStringLiteral("url")).toString(), m_first->url().toString(QUrl::StripTrailingSlash));
    QCOMPARE(two.value(QStringLiteral("url")).toString(), m_second->url().toString(QUrl::StripTrailingSlash));
    for (const QJsonObject &node : {one, two}) {
        QCOMPARE(node.value(QStringLiteral("health")).toString(), QStringLiteral("up"));
        QVERIFY(node.value(QStringLiteral("age_ms")).toInteger(-1) >= 0);
        QVERIFY(node.value(QStringLiteral("age_ms")).toInteger() <= 3000);
        QVERIFY(node.value(QStringLiteral("req_per_s")).isDouble());
        QCOMPARE(node.value(QStringLiteral("ledger_ok")).toBool(), true);
        QVERIFY(node.value(QStringLiteral("started_ms")).toInteger() > 0);
        QVERIFY(node.value(QStringLiteral("updated_ms")).toInteger() >= node.value("started_ms").toInteger() - 5000);
    }
    // Node two (a worker process of it answers) sees the same cluster.
    QJsonObject seenByTwo;
    QVERIFY2(waitUntil(
                 [&] {
                     seenByTwo = clusterOf(*m_second);
                     return seenByTwo.value("nodes").toArray().size() == 2 && leaders(seenByTwo) == 1;
                 },
                 kListedWithinMs),
             QJsonDocument(seenByTwo).toJson().constData());
}

// kill -9: node two writes no more heartbeats (and cannot delete its entry); within a few seconds
// node one shows it "stale", still listed, no longer "up".
void ClusterNodesTest::aNodeKilledWithSigkillTurnsStale()
{
    QVERIFY(::kill(pid_t(m_second->pid()), SIGKILL) == 0);
    QVERIFY(m_second->waitForExit(5000));
    QElapsedTimer clock;
    clock.start();
    QJsonObject two;
    const bool stale = waitUntil(
        [&] {
            two = nodeNamed(clusterOf(*m_first), QStringLiteral("node-two"));
            return two.value(QStringLiteral("health")).toString() == QStringLiteral("stale");
        },
        kStaleWithinMs);
    QVERIFY2(stale, QJsonDocument(two).toJson().constData());
    qInfo() << "node two stale" << clock.elapsed() << "ms after SIGKILL";
    QVERIFY(two.value(QStringLiteral("age_ms")).toInteger() > 3000);
    QCOMPARE(nodeNamed(clusterOf(*m_first), QStringLiteral("node-one")).value("health").toString(),
             QStringLiteral("up"));
}

// SIGTERM: the node drains and deletes its own entry on the way out, so the others drop it at
// their next read (about a second) instead of showing it stale for 30 s.
void ClusterNodesTest::aNodeThatStopsCleanlyLeavesTheList()
{
    auto third = startNode(QStringLiteral("node-three"), {QStringLiteral("--mode"), QStringLiteral("single")});
    QVERIFY2(third->isRunning(), qPrintable(third->stderrText()));
    QVERIFY(waitUntil([&] { return !nodeNamed(clusterOf(*m_first), QStringLiteral("node-three")).isEmpty(); },
                      kListedWithinMs));
    QCOMPARE(third->stop(), 0);
    QString seen;
    const bool gone = waitUntil(
        [&] {
            const QJsonObject node = nodeNamed(clusterOf(*m_first), QStringLiteral("node-three"));
            if (!node.isEmpty())
                seen = node.value(QStringLiteral("health")).toString();
            return node.isEmpty();
        },
        kStaleWithinMs);
    QVERIFY2(gone, qPrintable(QStringLiteral("node three still listed, %1").arg(seen)));
    QVERIFY2(seen != QStringLiteral("stale"), "a node that stopped cleanly was shown stale");
}

// A second node started with node one's name: it does not overwrite node one's entry, says why in
// its own answer, and stopping it leaves node one's entry in place.
void ClusterNodesTest::aSecondNodeWithATakenNameLeavesTheFirstListed()
{
    auto twin = startNode(QStringLiteral("node-one"), {QStringLiteral("--mode"), QStringLiteral("single")});
    QVERIFY2(twin->isRunning(), qPrintable(twin->stderrText()));
    const QByteArray firstPort = QByteArray::number(m_first->port());
    const auto entryIsTheFirsts = [&] {
        return m_redis.rawCommand("HGET taxicore:nodes node-one").contains(":" + firstPort + "\"");
    };
    QJsonObject cluster;
    bool overwritten = false;
    QVERIFY2(
        waitUntil(
            [&] {
                overwritten = overwritten || !entryIsTheFirsts();
                cluster = clusterOf(*twin);
                return cluster.value(QStringLiteral("directory_error")).toString().contains(QStringLiteral("node-one"));
            },
            kListedWithinMs),
        QJsonDocument(cluster).toJson().constData());
    QVERIFY2(!overwritten, "the second node overwrote node one's entry");
    QVERIFY2(twin->stderrText().contains("--node-name"), qPrintable(twin->stderrText()));
    QElapsedTimer watched; // a few more heartbeats of both
    watched.start();
    while (watched.elapsed() < 3000) {
        QVERIFY(entryIsTheFirsts());
        QTest::qWait(200);
    }
    QCOMPARE(twin->stop(), 0);
    QVERIFY(entryIsTheFirsts());
}

// Redis stopped: node one still answers, lists itself up (it is answering) and says why the
// directory could not be read; Redis back (empty: no persistence): its next heartbeat writes the
// entry again and the error goes.
void ClusterNodesTest::whileRedisIsAwayANodeListsItselfAndSaysWhy()
{
    QVERIFY(m_redis.stop());
    QJsonObject cluster;
    QVERIFY2(waitUntil(
                 [&] {
                     cluster = clusterOf(*m_first);
                     return !cluster.value(QStringLiteral("directory_error")).toString().isEmpty();
                 },
                 kStaleWithinMs),
             QJsonDocument(cluster).toJson().constData());
    QCOMPARE(nodeNamed(cluster, QStringLiteral("node-one")).value("health").toString(), QStringLiteral("up"));
    QString error;
    QVERIFY2(m_redis.restart(&error), qPrintable(error));
    QVERIFY2(waitUntil(
                 [&] {
                     cluster = clusterOf(*m_first);
                     return !cluster.contains(QStringLiteral("directory_error"));
                 },
                 kListedWithinMs),
             QJsonDocument(cluster).toJson().constData());
    QVERIFY(m_redis.rawCommand("HEXISTS taxicore:nodes node-one").startsWith(":1"));
}

// No --fleet: {"cluster": false, "nodes": [this server]}, named <hostname>:<port> by default, so
// the console has one code path. In processes mode a worker process answers, with its node's name.
void ClusterNodesTest::aServerOutsideAClusterListsItselfAlone()
{
    ServerProcess alone({QStringLiteral("--cars"), QStringLiteral("5"), QStringLiteral("--mode"),
                         QStringLiteral("processes"), QStringLiteral("--workers"), QStringLiteral("1")});
    QVERIFY2(alone.start(), qPrintable(alone.error()));
    QJsonObject cluster;
    QVERIFY(waitUntil(
        [&] {
            cluster = clusterOf(alone);
            return !cluster.value(QStringLiteral("nodes")).toArray().isEmpty();
        },
        5000));
    QCOMPARE(cluster.value(QStringLiteral("cluster")).toBool(), false);
    const QJsonArray nodes = cluster.value(QStringLiteral("nodes")).toArray();
    QCOMPARE(nodes.size(), 1);
    const QJsonObject self = nodes.first().toObject();
    QCOMPARE(self.value(QStringLiteral("name")).toString(),
             QStringLiteral("%1:%2").arg(QSysInfo::machineHostName()).arg(alone.port()));
    QCOMPARE(self.value(QStringLiteral("url")).toString(), alone.url().toString(QUrl::StripTrailingSlash));
    QCOMPARE(self.value(QStringLiteral("mode")).toString(), QStringLiteral("processes"));
    QCOMPARE(self.value(QStringLiteral("workers")).toInt(), 1);
    QCOMPARE(self.value(QStringLiteral("health")).toString(), QStringLiteral("up"));
    QCOMPARE(self.value(QStringLiteral("leader")).toBool(), true);
}

// Like every /admin/v1 route: without loopback trust, no token → 401, the token → 200.
void ClusterNodesTest::theNodeListNeedsTheAdminToken()
{
    const QByteArray token = "cluster-nodes-test-token";
    ServerProcess guarded({QStringLiteral("--cars"), QStringLiteral("5"), QStringLiteral("--trust-loopback"),
                           QStringLiteral("off"), QStringLiteral("--admin-token"), QString::fromLatin1(token)});
    QVERIFY2(guarded.start(), qPrintable(guarded.error()));
    HttpClient client(guarded.host(), guarded.port());
    const HttpResponse refused = client.get("/admin/v1/cluster");
    QCOMPARE(refused.status, 401);
    QVERIFY(refused.isJsonObject());
    QVERIFY(waitUntil([&] { return !clusterOf(guarded, {{"Authorization", "Bearer " + token}}).isEmpty(); }, 5000));
}

void ClusterNodesTest::aBadNodeNameIsRefusedAtStart()
{
    const ServerProcess::RunResult run = ServerProcess::run({QStringLiteral("--node-name"), QStringLiteral("a b")});
    QVERIFY(run.finished);
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains("--node-name"), run.err.constData());
}

void ClusterNodesTest::cleanupTestCase()
{
    m_second.reset();
    m_first.reset();
}

QTEST_GUILESS_MAIN(ClusterNodesTest)
#include "cluster_nodes_test.moc"
