#include "runtime/WorkerMain.h"

#include "cluster/FleetBackend.h"
#include "cluster/NodeDirectory.h"

#include "city/City.h"
#include "fleet/FleetStore.h"
#include "region/SharedRegion.h"
#include "region/WorkerProtocol.h"
#include "http/AdminApi.h"
#include "http/ConnectionGuard.h"
#include "http/LiveFeed.h"
#include "http/OperatorAccess.h"
#include "ledger/Ledger.h"
#include "runtime/AcceptLoop.h"
#include "runtime/AccessSettings.h"
#include "runtime/ApiStack.h"
#include "runtime/NodeStatusSampler.h"
#include "runtime/UnixSignalWatcher.h"
#include "runtime/WorkerChannel.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QScopeGuard>
#include <QSocketNotifier>
#include <QTimer>
#include <csignal>
#include <cstdio>
#include <memory>
#include <sys/socket.h>
#include <unistd.h>

namespace taxicore {

namespace {

// At exit, how long the ledger may take to answer the records already appended.
constexpr int kLedgerIdleWaitMs = 5000;

void fail(const QString &message)
{
    std::fprintf(stderr, "taxicore-server worker: %s\n", qPrintable(message));
}

} // namespace

int runWorker(const WorkerOptions &options)
{
    // Ctrl-C and a closed terminal signal the whole process group: the primary turns them into a
    // drain of its workers (over the channel), which must not die first with requests in flight.
    // SIGTERM drains this worker too (below): `pkill taxicore-server` or a TERM to the process
    // group reaches every process at once. The supervisor stops a worker with SIGKILL;
    // PDEATHSIG ends it with its primary.
    std::signal(SIGINT, SIG_IGN);
    std::signal(SIGHUP, SIG_IGN);
    UnixSignalWatcher terminationSignals(nullptr, UnixSignalWatcher::Watch::TerminateOnly);
    const int workerIndex = options.index;
    if (qEnvironmentVariable("TAXICORE_WORKER_FAULT") == QStringLiteral("crash-at-start"))
        std::abort(); // test hook: a worker that can never start (crash-loop breaker)
    QString error;
    auto region = SharedRegion::attach(kWorkerRegionFd, error);
    if (!region) {
        fail(error);
        return 1;
    }
    // The same backend as the primary's (ServerHost::start); in a cluster it publishes what this
    // worker changes, under the primary's name, and leaves applying the others' to the primary.
    const std::unique_ptr<FleetStore> fleetStore =
        openFleetBackend(*region, {options.fleetUrl, options.ledgerUrl, false, options.nodeOrigin}, &error);
    if (!fleetStore) {
        fail(error);
        return 1;
    }
    FleetStore &fleet = *fleetStore;
    const AccessSettings access = readAccessSettings(fleet.control().access);
    setOperatorAccessPolicy({access.adminToken, access.trustLoopback, access.deviceToken});
    std::shared_ptr<const city::City> city;
    if (!options.cityPath.isEmpty()) {
        city::CityLoadResult loaded = city::City::load(options.cityPath);
        if (!loaded.city) {
            fail(loaded.error);
            return 1;
        }
        city = loaded.city;
    }
    LedgerOptions ledgerOptions;
    ledgerOptions.dataDir = options.dataDir;
    ledgerOptions.durability = parseLedgerDurability(options.durability).value_or(LedgerDurability::Normal);
    ledgerOptions.verifyOnOpen = false;    // the primary verified the file before starting us
    ledgerOptions.createIfMissing = false; // and made it: gone now means deleted under the server
    ledgerOptions.url = options.ledgerUrl;
    // Not another server's ledger at the same path (the directory deleted and taken since), nor
    // the file with a -shm of our own (deleted under the others: writers not excluding each other).
    ledgerOptions.expectedFiles = options.ledgerFiles;
    Ledger::Opened ledger = Ledger::open(ledgerOptions);
    if (!ledger.ledger) {
        fail(ledger.error);
        return 1;
    }
    ApiStack stack(fleet, city, ledger.ledger.get(), workerIndex, options.limits, options.fleetUrl);
    // GET /admin/v1/cluster served here: the directory the primary's heartbeat fills (a cluster),
    // or this node alone, sampled from the region as the primary does.
    NodeDirectory nodes({options.nodeName, options.nodeUrl}, options.fleetUrl,
                        nodeStatusSampler(fleet, ledger.ledger.get(), nullptr), NodeDirectory::Role::Reader);
    setClusterView(fleet, [&nodes] { return nodes.snapshot(); });
    const auto forgetNodes = qScopeGuard([&fleet] { setClusterView(fleet, {}); });
    stack.feed().setIdleTimeoutMs(options.feedIdleTimeoutMs);
    ConnectionGuard &guard = stack.guard();
    WorkerSlot &slot = fleet.workerSlot(workerIndex);
    slot.pid.store(int32_t(getpid()), std::memory_order_relaxed);
    slot.startedMs.store(clock::monotonicMs(), std::memory_order_relaxed);

    // The heartbeat comes from this event loop, so a stalled loop stops it; lag is how late it is.
    QTimer heartbeat;
    QElapsedTimer sinceBeat;
    sinceBeat.start();
    heartbeat.setInterval(kWorkerHeartbeatMs);
    QObject::connect(&heartbeat, &QTimer::timeout, [&] {
        slot.heartbeatMs.store(clock::monotonicMs(), std::memory_order_relaxed);
        slot.loopLagUs.store(std::max<int64_t>(0, (sinceBeat.nsecsElapsed() / 1000) - kWorkerHeartbeatMs * 1000),
                             std::memory_order_relaxed);
        sinceBeat.restart();
    });
    heartbeat.start();

    // A kernel-policy listener the primary gave us: accepted with the same loop as the primary's
    // (back-off when out of descriptors). The descriptor is our copy; closing it leaves the
    // primary's open.
    std::unique_ptr<AcceptLoop> listener;
    const auto stopListening = [&] {
        if (!listener)
            return;
        const int fd = listener->fd();
        listener.reset();
        ::close(fd);
    };

    bool draining = false;
    // Time up: what is still owed is answered 503 (shutting_down) in its place, then the end. A
    // second Drain with a sooner deadline (the primary stopping during a mode switch's drain)
    // brings it forward; a later one changes nothing.
    QTimer drainDeadline;
    drainDeadline.setSingleShot(true);
    // Precise: a coarse timer may fire 5 % late, half of the supervisor's margin after a 10 s drain.
    drainDeadline.setTimerType(Qt::PreciseTimer);
    QObject::connect(&drainDeadline, &QTimer::timeout, qApp, [&guard] {
        guard.answerOwedBeforeStopping();
        QTimer::singleShot(ConnectionGuard::kLastAnswersMs, qApp, &QCoreApplication::quit);
    });
    const auto drain = [&](int withinMs) {
        if (draining && drainDeadline.remainingTime() <= withinMs)
            return;
        drainDeadline.start(withinMs);
        if (draining)
            return;
        draining = true;
        slot.state.store(WorkerSlotState::Draining, std::memory_order_relaxed);
        QObject::connect(&guard, &ConnectionGuard::allConnectionsClosed, qApp, &QCoreApplication::quit);
        stopListening();
        guard.startDraining();
    };

    const WorkerChannel channel(kWorkerChannelFd);
    QSocketNotifier notifier(kWorkerChannelFd, QSocketNotifier::Read);
    QObject::connect(&notifier, &QSocketNotifier::activated, [&] {
        for (;;) {
            const auto message = channel.receive();
            if (!message) {
                char probe;
                if (::recv(kWorkerChannelFd, &probe, 1, MSG_PEEK | MSG_DONTWAIT) == 0)
                    drain(kWorkerDrainTimeoutMs); // the primary is gone
                return;
            }
            switch (message->type) {
            case WorkerChannel::Type::Connection:
                // fd < 0: we are out of descriptors and the kernel dropped it; the primary still
                // holds its copy and places it elsewhere.
                if (draining || message->fd < 0 || guard.openConnections() >= kMaxConnectionsPerWorker) {
                    channel.send(WorkerChannel::Type::Declined, -1, message->id);
                    if (message->fd >= 0)
                        ::close(message->fd);
                } else {
                    guard.adoptSocket(message->fd);
                    slot.passedAdopted.fetch_add(1, std::memory_order_relaxed);
                    channel.send(WorkerChannel::Type::Adopted, -1, message->id);
                }
                break;
            case WorkerChannel::Type::Listen:
                stopListening();
                if (draining || message->fd < 0) {
                    if (message->fd >= 0)
                        ::close(message->fd);
                    break;
                }
                listener = std::make_unique<AcceptLoop>(message->fd, [&guard](int fd) { guard.adoptSocket(fd); });
                break;
            case WorkerChannel::Type::StopListening:
                stopListening();
                break;
            case WorkerChannel::Type::Drain:
                drain(message->id > 0 ? int(std::min<uint32_t>(message->id, kWorkerDrainTimeoutMs))
                                      : kWorkerDrainTimeoutMs);
                break;
            default:
                if (message->fd >= 0)
                    ::close(message->fd);
            }
        }
    });
    // Drained like the primary's Drain: what is in flight is answered (a booking awaiting its
    // commit included) before the worker exits.
    QObject::connect(&terminationSignals, &UnixSignalWatcher::terminationRequested, qApp,
                     [&] { drain(kWorkerDrainTimeoutMs); });
    terminationSignals.setServing();
    slot.heartbeatMs.store(clock::monotonicMs(), std::memory_order_relaxed);
    slot.state.store(WorkerSlotState::Serving, std::memory_order_release);
    const int code = QCoreApplication::exec();
    // The riders' feeds hear 1001 now: after a drain that timed out, the supervisor may kill this
    // process while it waits for its last commits, before the stack (and its feed) is destroyed.
    stack.feed().closeAllClients();
    // Commits still in flight reply through the stack: let them finish while it exists (the
    // ledger outlives it, and its destructor would run their callbacks after the stack is gone).
    ledger.ledger->waitUntilIdle(kLedgerIdleWaitMs);
    slot.state.store(WorkerSlotState::Exited, std::memory_order_relaxed);
    return code;
}

} // namespace taxicore
