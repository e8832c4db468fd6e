// The simulator moves its cars in FleetSimulator::kTickGroups groups spread over each tick, not all
// at once: every car still moves once per tick, but its positions leave in several smaller
// batches (one burst of 2,000 positions every 200 ms held up a cluster's live feed,
// docs/benchmarks.md §18). Read from the fleet's own stamps: each position write records when it
// happened (CarSnapshot::updatedMs), so the cars of one group share a moment and the groups'
// moments are kTickMs / kTickGroups apart.

#include "dispatch/FleetSimulator.h"
#include "fleet/SharedMemoryFleet.h"
#include "region/SharedRegion.h"

#include <QTest>
#include <algorithm>
#include <memory>
#include <vector>

using namespace taxicore;

class SimulatorGroupsTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aTickMovesItsCarsInGroupsSpreadOverIt()
    {
        QString error;
        const auto region = SharedRegion::create(error);
        QVERIFY2(region, qPrintable(error));
        SharedMemoryFleet fleet(*region);
        fleet.control().startedMs.store(clock::wallMs());
        fleet.control().simSpeed.store(1);
        FleetSimulator simulator(fleet, nullptr, 7, 1.0); // no city: straight lines, every car moves
        constexpr int kCars = 200;
        fleet.initialiseCars(kCars, [&](int) { return simulator.randomPoint(); });
        simulator.start();
        QTest::qWait(5 * FleetSimulator::kTickMs); // inherent: the simulator's own timer drives it
        simulator.stop();
        const qint64 stoppedMs = clock::wallMs();

        constexpr int kGroups = FleetSimulator::kTickGroups;
        std::vector<qint64> latestOfGroup(kGroups, 0);
        for (int id = 1; id <= kCars; ++id) {
            const auto car = fleet.car(id);
            QVERIFY(car);
            // Every car moved within the last tick or two (a loaded machine's timers run late);
            // its stamp from being placed is 5 ticks old.
            QVERIFY2(stoppedMs - car->updatedMs <= 2 * FleetSimulator::kTickMs,
                     qPrintable(QStringLiteral("car %1 last moved %2 ms ago").arg(id).arg(stoppedMs - car->updatedMs)));
            qint64 &latest = latestOfGroup[std::size_t((id - 1) % kGroups)];
            latest = std::max<qint64>(latest, car->updatedMs);
        }
        // The groups' last moves are spread over the tick, kTickMs / kTickGroups apart (175 ms
        // from first to last with 8 groups); all cars in one step would put them within a few ms.
        const auto [first, last] = std::minmax_element(latestOfGroup.begin(), latestOfGroup.end());
        const qint64 spreadMs = *last - *first;
        QVERIFY2(spreadMs >= FleetSimulator::kTickMs / kGroups * (kGroups - 1) / 2,
                 qPrintable(QStringLiteral("the groups moved within %1 ms of one another").arg(spreadMs)));
        QVERIFY2(spreadMs <= 2 * FleetSimulator::kTickMs,
                 qPrintable(QStringLiteral("the groups' last moves are %1 ms apart").arg(spreadMs)));
    }
};

QTEST_MAIN(SimulatorGroupsTest)
#include "server_simulator_groups_test.moc"
