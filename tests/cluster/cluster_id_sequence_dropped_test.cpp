// Booking ids when the cluster's sequence (taxicore_booking_ids, cluster/ClusterIds) is dropped
// while nodes still hold blocks of it: two nodes on one PostgreSQL and one Redis, real processes on
// loopback ports. Every booking answered 201 has an id of its own, and every one of them is in the
// ledger as its rider booked it. Each booking is cancelled at once, so that a node's copy does not
// skip an id for an open booking it heard of: the ids meet in the database.
//
// On the old code a node restarted after the drop made the sequence again at max(id)+1, below ids
// the other node still held, and the ledger's create was an upsert: the second booking under an id
// silently replaced the first, acknowledged one (another rider, another created_ms), and both
// riders were answered 201 with the same id.

#include "HttpClient.h"
#include "PostgresKit.h"
#include "RedisKit.h"
#include "RequireTool.h"
#include "RiderToken.h"
#include "ServerProcess.h"

#include "cluster/ClusterIds.h"

#include <QTest>
#include <memory>
#include <set>

using namespace taxicore::test;

namespace {

constexpr int kCars = 20;
constexpr int kNodeStartMs = 30'000;
constexpr int kBookingsBefore = 2; // per node, before the drop: each node holds a block then
constexpr int kRounds = 6;         // after it: one booking on each node per round

// A booking as its node answered it (201).
struct Answered {
    qint64 id = 0;
    QString rider;
    qint64 createdMs = 0;
};

} // namespace

class ClusterIdSequenceDroppedTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void aNodeRestartedAfterTheDropTakesIdsNoOtherNodeHolds();
    void anIdHandedOutTwiceNeverReplacesABooking();

private:
    std::unique_ptr<ServerProcess> startNode(const QString &name);
    void startNodes();
    void restartFirstNode();
    // Books on `node` as a rider of its own and cancels at once; the answer goes to m_answered.
    void bookAndCancel(ServerProcess &node, const QString &rider);
    // `count` bookings on each node, taking turns; riders named after `phase`.
    void bookOnBothNodes(const QString &phase, int count);
    void everyAnswerHasItsOwnIdAndItsOwnRow();
    qint64 largestBooking();

    PostgresKit m_postgres;
    RedisKit m_redis;
    QString m_database;
    std::unique_ptr<ServerProcess> m_first;
    std::unique_ptr<ServerProcess> m_second;
    std::vector<Answered> m_answered;
};

void ClusterIdSequenceDroppedTest::initTestCase()
{
    TC_REQUIRE_TOOL(!PostgresKit::binDir().isEmpty(), "PostgreSQL is not installed (package postgresql)");
    TC_REQUIRE_TOOL(!RedisKit::program().isEmpty(), "redis-server is not installed (package redis-server)");
    QVERIFY2(m_postgres.start(), qPrintable(m_postgres.error()));
    QString error;
    QVERIFY2(m_redis.start({}, &error), qPrintable(error));
}

// Each test a fresh database and an empty Redis: ids start from 1 again.
void ClusterIdSequenceDroppedTest::init()
{
    m_database = QStringLiteral("ids_%1").arg(QString::fromLatin1(QTest::currentTestFunction()).toLower());
    QVERIFY2(
        !m_postgres.psql(QStringLiteral("CREATE DATABASE %1").arg(m_database), QStringLiteral("postgres")).isNull(),
        qPrintable(m_postgres.error()));
    QVERIFY(m_redis.flushAll());
    m_answered.clear();
}

void ClusterIdSequenceDroppedTest::cleanup()
{
    m_first.reset();
    m_second.reset();
}

std::unique_ptr<ServerProcess> ClusterIdSequenceDroppedTest::startNode(const QString &name)
{
    auto node = std::make_unique<ServerProcess>(QStringList{
        QStringLiteral("--mode"), QStringLiteral("single"), QStringLiteral("--node-name"), name,
        QStringLiteral("--cars"), QString::number(kCars), QStringLiteral("--ledger"), m_postgres.url(m_database),
        QStringLiteral("--fleet"), m_redis.url(), QStringLiteral("--demand-rate"), QStringLiteral("0")});
    if (!node->start(kNodeStartMs))
        qWarning().noquote() << "node" << name << "did not start:" << node->error() << node->stderrText();
    return node;
}

void ClusterIdSequenceDroppedTest::startNodes()
{
    m_first = startNode(QStringLiteral("node-one"));
    QVERIFY2(m_first->isRunning(), qPrintable(m_first->stderrText()));
    m_second = startNode(QStringLiteral("node-two"));
    QVERIFY2(m_second->isRunning(), qPrintable(m_second->stderrText()));
}

// A new process: the ids it had left in its block are gone with it; its next block comes from the
// sequence as it is now.
void ClusterIdSequenceDroppedTest::restartFirstNode()
{
    QCOMPARE(m_first->stop(), 0);
    m_first = startNode(QStringLiteral("node-one"));
    QVERIFY2(m_first->isRunning(), qPrintable(m_first->stderrText()));
}

void ClusterIdSequenceDroppedTest::bookAndCancel(ServerProcess &node, const QString &rider)
{
    HttpClient http(node.host(), node.port());
    const QJsonObject order{
        {QStringLiteral("rider_id"), rider},
        {QStringLiteral("pickup"), QJsonObject{{QStringLiteral("lat"), 57.7}, {QStringLiteral("lng"), 11.97}}}};
    const HttpResponse booked = http.postJson("/api/v1/bookings", order);
    QVERIFY2(booked.status == 201, qPrintable(booked.describe() + node.stderrText().right(2000)));
    const QJsonObject booking = booked.json();
    Answered answered{booking.value(QStringLiteral("booking_id")).toInteger(), rider,
                      booking.value(QStringLiteral("created_ms")).toInteger()};
    QVERIFY(answered.id > 0);
    m_answered.push_back(answered);
    const HttpResponse cancelled = moveBooking(http, answered.id, "cancel", riderToken(booking));
    QVERIFY2(cancelled.status == 200, qPrintable(cancelled.describe()));
}

void ClusterIdSequenceDroppedTest::bookOnBothNodes(const QString &phase, int count)
{
    for (int i = 0; i < count; ++i) {
        bookAndCancel(*m_first, QStringLiteral("%1-one-%2").arg(phase).arg(i));
        if (QTest::currentTestFailed())
            return;
        bookAndCancel(*m_second, QStringLiteral("%1-two-%2").arg(phase).arg(i));
        if (QTest::currentTestFailed())
            return;
    }
}

// No id answered twice, and each answered booking's row is the one its rider made.
void ClusterIdSequenceDroppedTest::everyAnswerHasItsOwnIdAndItsOwnRow()
{
    std::set<qint64> ids;
    for (const Answered &a : m_answered)
        QVERIFY2(
            ids.insert(a.id).second,
            qPrintable(QStringLiteral("booking id %1 was answered 201 twice (again to %2)").arg(a.id).arg(a.rider)));
    for (const Answered &a : m_answered) {
        const QString row = m_postgres.psql(
            QStringLiteral("SELECT rider_id || '|' || created_ms FROM bookings WHERE id = %1").arg(a.id), m_database);
        QCOMPARE(row.trimmed(), QStringLiteral("%1|%2").arg(a.rider).arg(a.createdMs));
    }
}

qint64 ClusterIdSequenceDroppedTest::largestBooking()
{
    return m_postgres.psql(QStringLiteral("SELECT max(id) FROM bookings"), m_database).toLongLong();
}

// The sequence dropped while both nodes hold blocks of it; node one restarts and makes it again.
// It must start above the block node two still holds.
void ClusterIdSequenceDroppedTest::aNodeRestartedAfterTheDropTakesIdsNoOtherNodeHolds()
{
    startNodes();
    bookOnBothNodes(QStringLiteral("before"), kBookingsBefore);
    QVERIFY(!QTest::currentTestFailed());
    const qint64 largestBefore = largestBooking();
    QVERIFY2(!m_postgres.psql(QStringLiteral("DROP SEQUENCE taxicore_booking_ids"), m_database).isNull(),
             qPrintable(m_postgres.error()));
    restartFirstNode();
    const std::size_t firstAfter = m_answered.size();
    bookOnBothNodes(QStringLiteral("after"), kRounds);
    QVERIFY(!QTest::currentTestFailed());
    everyAnswerHasItsOwnIdAndItsOwnRow();
    QVERIFY(!QTest::currentTestFailed());
    // Made again above the margin at once, not only after a refused id.
    QVERIFY2(m_answered[firstAfter].id >= largestBefore + qint64(taxicore::ClusterIds::kReseedMargin),
             qPrintable(QStringLiteral("node one's first id after the drop %1, largest before %2")
                            .arg(m_answered[firstAfter].id)
                            .arg(largestBefore)));
}

// The sequence made again just above the largest booking (as a node of the previous release did,
// or an operator restoring a dump): the restarted node's block overlaps the one node two holds.
// The ledger refuses the second booking under each such id; its node takes a fresh block and the
// rider is answered 201 under a fresh id.
void ClusterIdSequenceDroppedTest::anIdHandedOutTwiceNeverReplacesABooking()
{
    startNodes();
    bookOnBothNodes(QStringLiteral("before"), kBookingsBefore);
    QVERIFY(!QTest::currentTestFailed());
    const qint64 largestBefore = largestBooking();
    QVERIFY2(
        !m_postgres
             .psql(QStringLiteral("DROP SEQUENCE taxicore_booking_ids;"
                                  " CREATE SEQUENCE taxicore_booking_ids INCREMENT BY 32;"
                                  " SELECT setval('taxicore_booking_ids', (SELECT max(id) + 1 FROM bookings), false)"),
                   m_database)
             .isNull(),
        qPrintable(m_postgres.error()));
    restartFirstNode();
    bookOnBothNodes(QStringLiteral("after"), kRounds);
    QVERIFY(!QTest::currentTestFailed());
    everyAnswerHasItsOwnIdAndItsOwnRow();
    QVERIFY(!QTest::currentTestFailed());
    // The ids did meet: a node refused under a taken id took its next block above the margin.
    QVERIFY2(largestBooking() >= largestBefore + qint64(taxicore::ClusterIds::kReseedMargin),
             qPrintable(QStringLiteral("largest booking %1, before %2").arg(largestBooking()).arg(largestBefore)));
}

QTEST_GUILESS_MAIN(ClusterIdSequenceDroppedTest)
#include "cluster_id_sequence_dropped_test.moc"
