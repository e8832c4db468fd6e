// Booking ids across a cluster's nodes (cluster/ClusterIds) on a real PostgreSQL: blocks of
// ClusterIds::kBlock from one sequence, never one id twice, and a restart of PostgreSQL between
// two blocks costs no booking (the idle connection the server ended is replaced within the same
// wait; on the old code the first block after the restart failed, and with it a rider's booking).
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

QTEST_GUILESS_MAIN(ClusterBookingIdsTest)
#include "cluster_booking_ids_test.moc"
