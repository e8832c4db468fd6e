// A node's fleet copy with nothing to do costs no CPU (issue 17, found after a PostgreSQL restart
// left processes-mode workers replaced for missed heartbeats): the feed's flush thread sleeps until
// a batch, a claim's expiry, a repair of the live view or a resync is due. A worker's copy, and a
// primary's before the runtime gives it a resync, have no resync: their deadline passed once, 30 s
// after the start, and the flusher spun on a core from then on. Here the resync period is 200 ms,
// so the spin would start within the test; the test's own CPU time over a quiet second tells.
// A real redis-server, as a node has it.
#include "FleetLine.h"
#include "FleetNodes.h"
#include "RedisKit.h"
#include "RequireTool.h"
#include "Wait.h"

#include "cluster/ClusterFleet.h"
#include "region/SharedRegion.h"

#include <QTest>
#include <atomic>
#include <memory>
#include <sys/resource.h>

using namespace taxicore;
using namespace taxicore::test;

namespace {

constexpr int kCars = 3;
constexpr int kResyncMs = 200;
constexpr int kQuietMs = 1000;
// What a sleeping flusher and the test's idle threads may cost in kQuietMs; one spinning thread
// costs about kQuietMs (on a 2-core machine shared with other work, at least a third of it).
constexpr qint64 kIdleCpuBudgetMs = 150;

qint64 processCpuMs()
{
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const auto ms = [](const timeval &t) { return qint64(t.tv_sec) * 1000 + t.tv_usec / 1000; };
    return ms(usage.ru_utime) + ms(usage.ru_stime);
}

} // namespace

class ClusterIdleCopyTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void aCopyWithoutResyncSleepsPastTheResyncPeriod();
    void aPrimarysResyncStillRunsEveryPeriod();

private:
    std::unique_ptr<ClusterFleet> open(bool primary, quint64 origin);

    RedisKit m_redis;
    std::vector<std::unique_ptr<SharedRegion>> m_regions;
};

void ClusterIdleCopyTest::initTestCase()
{
    TC_REQUIRE_TOOL(!RedisKit::program().isEmpty(), "redis-server is not installed (package redis-server)");
    QString error;
    QVERIFY2(m_redis.start({}, &error), qPrintable(error));
}

std::unique_ptr<ClusterFleet> ClusterIdleCopyTest::open(bool primary, quint64 origin)
{
    QString error;
    auto region = SharedRegion::create(error);
    if (!region) {
        qWarning().noquote() << "cannot create a region:" << error;
        return nullptr;
    }
    ClusterFleet::Options options{m_redis.url(), kUnusedLedgerUrl, primary, origin};
    options.resyncMs = kResyncMs;
    auto fleet = ClusterFleet::open(*region, options, &error);
    if (!fleet) {
        qWarning().noquote() << "cannot open the copy:" << error;
        return nullptr;
    }
    fleet->initialiseCars(kCars, placeNorth);
    m_regions.push_back(std::move(region));
    return fleet;
}

void ClusterIdleCopyTest::aCopyWithoutResyncSleepsPastTheResyncPeriod()
{
    auto worker = open(false, 1);
    auto primary = open(true, 2); // no setResync: as a primary before its ledger is open
    QVERIFY(worker && primary);
    QVERIFY(worker->updatePosition(1, placeNorth(2), 0, 0, false)); // one batch out, then nothing

    QTest::qWait(3 * kResyncMs); // past the resync period: the old flusher spins from here on
    const qint64 before = processCpuMs();
    QTest::qWait(kQuietMs);
    const qint64 spent = processCpuMs() - before;
    QVERIFY2(spent <= kIdleCpuBudgetMs,
             qPrintable(QStringLiteral("two idle fleet copies cost %1 ms of CPU in %2 ms").arg(spent).arg(kQuietMs)));
}

void ClusterIdleCopyTest::aPrimarysResyncStillRunsEveryPeriod()
{
    auto primary = open(true, 3);
    QVERIFY(primary);
    std::atomic<int> resyncs{0};
    primary->setResync([&resyncs](ClusterFleet &) { resyncs.fetch_add(1); });
    // The first at once (asked for on setResync), then one per kResyncMs.
    QVERIFY2(waitUntil([&] { return resyncs.load() >= 4; }, 20 * kResyncMs),
             qPrintable(QStringLiteral("%1 resyncs in %2 ms").arg(resyncs.load()).arg(20 * kResyncMs)));
    primary->setResync({}); // returns once no resync runs: `resyncs` outlives every call
}

QTEST_GUILESS_MAIN(ClusterIdleCopyTest)
#include "cluster_idle_copy_test.moc"
