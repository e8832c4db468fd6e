// The node list across hosts whose wall clocks disagree: two real nodes on one PostgreSQL and one
// Redis, one node's wall clock a minute behind the host's and the other's a minute ahead
// (libfaketime; the monotonic clock is left alone, as on a host whose clock is set wrong). Ages
// judged on two hosts' wall clocks would show the node that is behind as older than the drop
// window (left out, its entry deleted) and the node that is ahead as fresh for two minutes after
// it died; judged on one clock, both are up, stay listed, and a killed node turns stale in the
// usual few seconds.

#include "FakeClock.h"
#include "HttpClient.h"
#include "NodeListKit.h"
#include "PostgresKit.h"
#include "RedisKit.h"
#include "RequireTool.h"
#include "ServerProcess.h"
#include "Wait.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>
#include <memory>
#include <signal.h>

using namespace taxicore::test;

namespace {

constexpr int kCars = 10;
// Each node's wall clock is this far from the host's: twice the 30 s drop window between them.
constexpr int kSkewS = 60;
// A started node is listed by the other within a few heartbeats; the margin is for a loaded 2-core machine.
constexpr int kListedWithinMs = 15'000;
// How long both must stay listed up: a few heartbeats, each read judging the other's age anew.
constexpr int kWatchedMs = 4000;
// A killed node is stale 3-4 s after its last heartbeat, as without skew (cluster_nodes_test).
constexpr int kStaleWithinMs = 8000;

QString healthOf(const QJsonObject &node)
{
    return node.value(QStringLiteral("health")).toString();
}

QByteArray shown(const QJsonObject &json)
{
    return QJsonDocument(json).toJson(QJsonDocument::Compact);
}

} // namespace

class ClusterNodeClockSkewTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void nodesWhoseClocksDisagreeListEachOtherUp();
    void theirEntriesStayListedAndInRedis();
    void aKilledNodeWhoseClockIsAheadTurnsStale();
    void cleanupTestCase();

private:
    std::unique_ptr<ServerProcess> startNode(const QString &name, int offsetS, const QStringList &modeArgs);

    PostgresKit m_postgres;
    RedisKit m_redis;
    std::unique_ptr<ServerProcess> m_behind; // wall clock kSkewS behind
    std::unique_ptr<ServerProcess> m_ahead;  // wall clock kSkewS ahead
};

std::unique_ptr<ServerProcess> ClusterNodeClockSkewTest::startNode(const QString &name, int offsetS,
                                                                   const QStringList &modeArgs)
{
    auto node = std::make_unique<ServerProcess>(
        QStringList{QStringLiteral("--node-name"), name, QStringLiteral("--cars"), QString::number(kCars),
                    QStringLiteral("--ledger"), m_postgres.url(), QStringLiteral("--fleet"), m_redis.url(),
                    QStringLiteral("--demand-rate"), QStringLiteral("0")}
        + modeArgs);
    node->setEnvironment(wallClockOffsetBy(offsetS));
    if (!node->start(30'000))
        qWarning().noquote() << "node did not start:" << node->error() << node->stderrText();
    return node;
}

void ClusterNodeClockSkewTest::initTestCase()
{
    TC_REQUIRE_TOOL(fakeTimeAvailable(), "libfaketime is not installed (package faketime)");
    TC_REQUIRE_TOOL(!PostgresKit::binDir().isEmpty(), "PostgreSQL is not installed (package postgresql)");
    TC_REQUIRE_TOOL(!RedisKit::program().isEmpty(), "redis-server is not installed (package redis-server)");
    QVERIFY2(m_postgres.start(), qPrintable(m_postgres.error()));
    QString error;
    QVERIFY2(m_redis.start({}, &error), qPrintable(error));
    // The node behind in processes mode: its worker process (same skewed clock) answers from the
    // directory as a reader.
    m_behind = startNode(
        QStringLiteral("node-behind"), -kSkewS,
        {QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"), QStringLiteral("1")});
    QVERIFY2(m_behind->isRunning(), qPrintable(m_behind->stderrText()));
    m_ahead = startNode(QStringLiteral("node-ahead"), kSkewS, {QStringLiteral("--mode"), QStringLiteral("single")});
    QVERIFY2(m_ahead->isRunning(), qPrintable(m_ahead->stderrText()));
}

// Each node lists the other up with a small age. The nodes' own started_ms (their wall clocks)
// show the skew is in effect, so the test cannot pass because libfaketime did nothing.
void ClusterNodeClockSkewTest::nodesWhoseClocksDisagreeListEachOtherUp()
{
    const struct {
        ServerProcess *reader;
        QString other;
    } views[] = {{m_ahead.get(), QStringLiteral("node-behind")}, {m_behind.get(), QStringLiteral("node-ahead")}};
    for (const auto &view : views) {
        QJsonObject other;
        const bool up = waitUntil(
            [&] {
                other = nodeNamed(clusterOf(*view.reader), view.other);
                return healthOf(other) == QStringLiteral("up");
            },
            kListedWithinMs);
        QVERIFY2(up, qPrintable(view.other + QStringLiteral(" not listed up: ") + shown(other)));
        QVERIFY2(other.value(QStringLiteral("age_ms")).toInteger(-1) >= 0, shown(other).constData());
        QVERIFY2(other.value(QStringLiteral("age_ms")).toInteger() <= 3000, shown(other).constData());
    }

    const qint64 hostNowMs = QDateTime::currentMSecsSinceEpoch();
    const QJsonObject cluster = clusterOf(*m_ahead);
    const qint64 behindStarted = nodeNamed(cluster, QStringLiteral("node-behind")).value("started_ms").toInteger();
    const qint64 aheadStarted = nodeNamed(cluster, QStringLiteral("node-ahead")).value("started_ms").toInteger();
    QVERIFY2(behindStarted < hostNowMs - (kSkewS - 10) * 1000, shown(cluster).constData());
    QVERIFY2(aheadStarted > hostNowMs + (kSkewS - 40) * 1000, shown(cluster).constData());
}

// A few heartbeats later both are still up in both views, and neither entry was deleted from the
// hash by the other node (an entry judged older than the drop window is).
void ClusterNodeClockSkewTest::theirEntriesStayListedAndInRedis()
{
    QElapsedTimer watched;
    watched.start();
    while (watched.elapsed() < kWatchedMs) {
        for (ServerProcess *reader : {m_ahead.get(), m_behind.get()}) {
            const QJsonObject cluster = clusterOf(*reader);
            for (const QString &name : {QStringLiteral("node-behind"), QStringLiteral("node-ahead")})
                QVERIFY2(healthOf(nodeNamed(cluster, name)) == QStringLiteral("up"),
                         qPrintable(name + QStringLiteral(" not up in ") + shown(cluster)));
        }
        QVERIFY(m_redis.rawCommand("HEXISTS taxicore:nodes node-behind").startsWith(":1"));
        QVERIFY(m_redis.rawCommand("HEXISTS taxicore:nodes node-ahead").startsWith(":1"));
        QTest::qWait(250);
    }
}

// kill -9 of the node whose clock is ahead: its last heartbeat must not look fresh for the length
// of its skew; the node behind shows it stale within the usual few seconds.
void ClusterNodeClockSkewTest::aKilledNodeWhoseClockIsAheadTurnsStale()
{
    QVERIFY(::kill(pid_t(m_ahead->pid()), SIGKILL) == 0);
    QVERIFY(m_ahead->waitForExit(5000));
    QElapsedTimer clock;
    clock.start();
    QJsonObject ahead;
    const bool stale = waitUntil(
        [&] {
            ahead = nodeNamed(clusterOf(*m_behind), QStringLiteral("node-ahead"));
            return healthOf(ahead) == QStringLiteral("stale");
        },
        kStaleWithinMs);
    QVERIFY2(stale, shown(ahead).constData());
    qInfo() << "node ahead stale" << clock.elapsed() << "ms after SIGKILL";
    QVERIFY(ahead.value(QStringLiteral("age_ms")).toInteger() > 3000);
}

void ClusterNodeClockSkewTest::cleanupTestCase()
{
    m_ahead.reset();
    m_behind.reset();
}

QTEST_GUILESS_MAIN(ClusterNodeClockSkewTest)
#include "cluster_node_clock_skew_test.moc"
