// Least-loaded's count of a worker's connections (server/runtime/ConnectionDispatcher.cpp), where
// the primary's I/O thread makes it: a worker counts a passed connection in its slot the moment it
// adopts it, while the primary hears of the adoption only when it is back in its event loop
// (through the supervisor). During a burst of accepts that is after the whole burst. Counting
// such a connection both as open and as still on its way gave a burst to whichever worker was
// slowest to adopt — the busiest (a bench run split 1,000 connections 257 : 744).
//
// The dispatcher, the region and the channels are the real ones; the two workers are played by
// the test at the protocol's level, as runWorker (server/runtime/WorkerMain.cpp) does: the prompt
// one reads each connection at once and counts it as adopted, the busy one reads nothing until
// the burst is over. Both answer Adopted only after the burst, as the primary would hear it.

#include "fleet/SharedMemoryFleet.h"
#include "http/ConnectionGuard.h"
#include "metrics/MetricsRecorder.h"
#include "region/Clock.h"
#include "region/RegionLayout.h"
#include "region/SharedRegion.h"
#include "runtime/ConnectionDispatcher.h"
#include "runtime/WorkerChannel.h"

#include <QTest>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

using namespace taxicore;

namespace {

constexpr int kBurst = 120;
constexpr int kPrompt = 1; // worker indexes (slot 0 is the primary's)
constexpr int kBusy = 2;
// An even split of kBurst, give or take the one request the busy worker has in flight.
constexpr int kSplitSlack = 2;

struct PlayedWorker {
    int index = 0;
    int ours = -1;   // the worker's end of its channel
    int theirs = -1; // the dispatcher's end
    std::vector<uint32_t> adopted;
};

} // namespace

class LeastLoadedCountTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aBurstIsSplitByWhatEachWorkerHoldsOnce();
};

void LeastLoadedCountTest::aBurstIsSplitByWhatEachWorkerHoldsOnce()
{
    QString error;
    const auto region = SharedRegion::create(error);
    QVERIFY2(region, qPrintable(error));
    SharedMemoryFleet fleet(*region);
    MetricsRecorder primaryMetrics(fleet.workerSlot(0));
    ConnectionGuard inProcess(ConnectionLimits{}, primaryMetrics);
    ConnectionDispatcher dispatcher(inProcess, fleet);

    PlayedWorker workers[2];
    workers[0].index = kPrompt;
    workers[1].index = kBusy;
    QList<ConnectionDispatcher::WorkerLink> links;
    for (PlayedWorker &w : workers) {
        int pair[2];
        QCOMPARE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair), 0);
        w.ours = pair[0];
        w.theirs = pair[1];
        links.append({w.index, w.theirs});
        WorkerSlot &slot = fleet.workerSlot(w.index);
        slot.heartbeatMs.store(clock::monotonicMs());
        slot.state.store(WorkerSlotState::Serving);
    }
    fleet.workerSlot(kBusy).inFlight.store(1); // inside a request: why it reads nothing now
    dispatcher.setPolicy(DistributionPolicy::LeastLoaded);
    dispatcher.setWorkers(links);
    dispatcher.setToWorkers(true);

    auto takeWhatCame = [&fleet](PlayedWorker &w) {
        WorkerSlot &slot = fleet.workerSlot(w.index);
        while (const auto message = WorkerChannel(w.ours).receive()) {
            QCOMPARE(message->type, WorkerChannel::Type::Connection);
            ::close(message->fd);
            slot.openConnections.fetch_add(1); // as ConnectionGuard::adoptSocket counts it
            slot.passedAdopted.fetch_add(1);   // as runWorker counts it
            w.adopted.push_back(message->id);
        }
    };
    for (int i = 0; i < kBurst; ++i) {
        int client[2];
        QCOMPARE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, client), 0);
        ::close(client[1]);
        dispatcher.dispatch(client[0]);
        takeWhatCame(workers[0]);
    }
    takeWhatCame(workers[1]);

    const int prompt = int(workers[0].adopted.size());
    const int busy = int(workers[1].adopted.size());
    QCOMPARE(prompt + busy, kBurst);
    QVERIFY2(std::abs(prompt - busy) <= kSplitSlack,
             qPrintable(QStringLiteral("the burst was split %1 (prompt) : %2 (busy)").arg(prompt).arg(busy)));

    // The primary hears of the adoptions: nothing is counted twice or left over.
    for (const PlayedWorker &w : workers)
        for (const uint32_t id : w.adopted)
            dispatcher.adopted(w.index, id);
    for (PlayedWorker &w : workers)
        ::close(w.ours);
}

QTEST_GUILESS_MAIN(LeastLoadedCountTest)
#include "runtime_least_loaded_count_test.moc"
