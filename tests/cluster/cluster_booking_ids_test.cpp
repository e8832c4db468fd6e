// Booking ids across a cluster's nodes (cluster/ClusterIds) on a real PostgreSQL: blocks of
// ClusterIds::kBlock from one sequence, never one id twice, and a restart of PostgreSQL between
// two blocks costs no booking (the idle connection the server ended is replaced within the same
// wait; on the old code the first block after the restart failed, and with it a rider's booking),
// and a sequence dropped while a process runs is made again above the bookings.
#include "PostgresKit.h"
#include "RequireTool.h"

#include "cluster/ClusterIds.h"

#include <QTest>
#include <set>

using namespace taxicore;

class ClusterBookingIdsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void twoProcessesNeverShareAnId();
    void theFirstBlockAfterARestartIsTaken();
    void aSequenceDroppedWhileRunningIsMadeAgainAboveTheBookings();

private:
    PostgresKit m_postgres;
};

void ClusterBookingIdsTest::initTestCase()
{
    TC_REQUIRE_TOOL(!PostgresKit::binDir().isEmpty(), "PostgreSQL is not installed (package postgresql)");
    QVERIFY2(m_postgres.start(), qPrintable(m_postgres.error()));
}

void ClusterBookingIdsTest::twoProcessesNeverShareAnId()
{
    ClusterIds one(m_postgres.url()), two(m_postgres.url());
    std::set<uint64_t> seen;
    for (int i = 0; i < 3 * ClusterIds::kBlock; ++i) {
        for (ClusterIds *ids : {&one, &two}) {
            const uint64_t id = ids->next();
            QVERIFY2(id != 0, qPrintable(ids->lastError()));
            QVERIFY2(seen.insert(id).second, qPrintable(QStringLiteral("id %1 handed out twice").arg(id)));
        }
    }
}

void ClusterBookingIdsTest::theFirstBlockAfterARestartIsTaken()
{
    ClusterIds ids(m_postgres.url());
    for (int i = 0; i < ClusterIds::kBlock; ++i) // this block's ids: the next one needs the database
        QVERIFY2(ids.next() != 0, qPrintable(ids.lastError()));
    m_postgres.stop();
    QVERIFY2(m_postgres.start(), qPrintable(m_postgres.error()));
    QVERIFY2(ids.next() != 0, qPrintable(ids.lastError()));
}

// The sequence dropped while a process holds a block (an operator, a dump restored without it):
// once the block is used, the next one comes from the sequence made again, above every booking by
// more than any process may still hold. On the old code the process never made it again: every
// booking after its block failed (503) until it restarted.
void ClusterBookingIdsTest::aSequenceDroppedWhileRunningIsMadeAgainAboveTheBookings()
{
    const QString db = QStringLiteral("dropped");
    QVERIFY(!m_postgres.psql(QStringLiteral("CREATE DATABASE dropped"), QStringLiteral("postgres")).isNull());
    QVERIFY(!m_postgres.psql(QStringLiteral("CREATE TABLE bookings (id bigint PRIMARY KEY)"), db).isNull());
    ClusterIds ids(m_postgres.url(db));
    uint64_t last = 0;
    for (int i = 0; i < ClusterIds::kBlock; ++i) {
        last = ids.next();
        QVERIFY2(last != 0, qPrintable(ids.lastError()));
        QVERIFY(m_postgres.psql(QStringLiteral("INSERT INTO bookings VALUES (%1)").arg(last), db).isEmpty());
    }
    QVERIFY(!m_postgres.psql(QStringLiteral("DROP SEQUENCE taxicore_booking_ids"), db).isNull());
    const uint64_t next = ids.next();
    QVERIFY2(next != 0, qPrintable(ids.lastError()));
    QVERIFY2(next > last + ClusterIds::kReseedMargin, qPrintable(QStringLiteral("%1 after %2").arg(next).arg(last)));
}

QTEST_GUILESS_MAIN(ClusterBookingIdsTest)
#include "cluster_booking_ids_test.moc"
