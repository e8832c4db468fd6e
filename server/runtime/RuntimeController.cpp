#include "runtime/RuntimeController.h"

#include "dispatch/AbandonedMoves.h"
#include "fleet/FleetStore.h"
#include "http/ConnectionGuard.h"
#include "http/HttpService.h"
#include "runtime/ConnectionDispatcher.h"
#include "ledger/Ledger.h"
#include "control/EventLog.h"
#include "runtime/ListenerGroup.h"
#include "control/RuntimeMailbox.h"
#include "region/WorkerProtocol.h"

#include <QJsonObject>
#include <QThreadPool>
#include <fcntl.h>
#include <unistd.h>

namespace taxicore {

namespace {
constexpr int kMailboxPollMs = 20;
// A dead worker's moves wait this long between tries while the ledger cannot be read (each try
// may wait a lookup's timeout on this thread, the supervisor's).
constexpr int kAbandonedMovesRetryMs = 5000;
} // namespace

RuntimeController::RuntimeController(FleetStore &fleet, InProcess inProcess, WorkerSupervisor::Settings workers,
                                     Ledger *ledger, QObject *parent)
    : QObject(parent)
    , m_fleet(fleet)
    , m_in(inProcess)
    , m_supervisor(std::make_unique<WorkerSupervisor>(fleet, std::move(workers), this))
    , m_mailboxTimer(this)
    , m_ledger(ledger)
{
    qRegisterMetaType<QList<ConnectionDispatcher::WorkerLink>>();
    connect(m_supervisor.get(), &WorkerSupervisor::readyChanged, this, &RuntimeController::onWorkersChanged);
    connect(m_supervisor.get(), &WorkerSupervisor::crashLoop, this, &RuntimeController::onCrashLoop);
    // The dispatcher's bookkeeping of passed connections lives on the I/O thread.
    connect(m_supervisor.get(), &WorkerSupervisor::connectionAdopted, this, [this](int index, uint32_t id) {
        QMetaObject::invokeMethod(
            m_in.dispatcher, [d = m_in.dispatcher, index, id] { d->adopted(index, id); }, Qt::QueuedConnection);
    });
    connect(m_supervisor.get(), &WorkerSupervisor::connectionDeclined, this, [this](int index, uint32_t id) {
        QMetaObject::invokeMethod(
            m_in.dispatcher, [d = m_in.dispatcher, index, id] { d->declined(index, id); }, Qt::QueuedConnection);
    });
    connect(m_supervisor.get(), &WorkerSupervisor::workerGone, this, [this](int index, qint64 pid) {
        QMetaObject::invokeMethod(
            m_in.dispatcher, [d = m_in.dispatcher, index] { d->workerGone(index); }, Qt::QueuedConnection);
        // Once no commit the dead process sent can still land, the ledger tells what became of its moves.
        QTimer::singleShot(m_ledger ? m_ledger->commitsOfTheDeadLandWithinMs() : 0, this,
                           [this, pid] { settleMovesOf(int(pid)); });
    });
    m_mailboxTimer.setInterval(kMailboxPollMs);
    connect(&m_mailboxTimer, &QTimer::timeout, this, &RuntimeController::pollMailbox);
    m_mailboxTimer.start();
}

RuntimeController::~RuntimeController() = default;

void RuntimeController::settleMovesOf(int pid)
{
    if (pid <= 0)
        return;
    const int left = settleAbandonedMoves(m_fleet, m_ledger ? &m_ledger->reader() : nullptr, pid);
    if (left > 0) // the ledger cannot be read now: its moves stay reserved until it can
        QTimer::singleShot(kAbandonedMovesRetryMs, this, [this, pid] { settleMovesOf(pid); });
}

void RuntimeController::pollMailbox()
{
    RuntimeMailbox mailbox(m_fleet.control());
    if (const auto wanted = mailbox.pending()) {
        const QString error = apply(wanted->settings);
        mailbox.answer(wanted->sequence, error, m_settings);
    }
    archiveEvents();
}

void RuntimeController::archiveEvents()
{
    const uint64_t newest = m_fleet.control().nextEvent.load(std::memory_order_acquire);
    if (!m_ledger || newest == m_archivedEvents)
        return;
    const QJsonArray events =
        EventLog(m_fleet.control()).newest(int(std::min<uint64_t>(newest - m_archivedEvents, kEventSlots)));
    for (qsizetype i = events.size() - 1; i >= 0; --i) { // oldest first
        const QJsonObject e = events[i].toObject();
        m_ledger->append(EventRecord{e.value(QStringLiteral("kind")).toString(), e,
                                     qint64(e.value(QStringLiteral("time_ms")).toDouble())});
    }
    m_archivedEvents = newest;
}

QString RuntimeController::apply(const RuntimeSettings &wanted)
{
    const RuntimeSettings next = wanted.resolved();
    if (next.mode == RuntimeMode::Processes && m_supervisor->breakerTripped()) {
        if (m_settings.mode == RuntimeMode::Processes)
            return QStringLiteral("workers are crash-looping; the breaker is open");
        m_supervisor->resetBreaker(); // an operator asking again gets a fresh start
    }
    const RuntimeSettings previous = m_settings;
    m_settings = next;
    const bool processes = next.mode == RuntimeMode::Processes;
    QThreadPool *pool = next.mode == RuntimeMode::Pool ? m_in.pool : nullptr;
    const int threads = next.threads;
    QMetaObject::invokeMethod(
        m_in.service,
        [service = m_in.service, pool, threads] {
            if (pool)
                pool->setMaxThreadCount(threads);
            service->setThreadPool(pool);
        },
        Qt::QueuedConnection);
    // Connections move to the workers once all of them serve (or after a deadline), so the
    // reconnecting clients spread over every worker instead of piling onto the first one up.
    m_workersDeadline = processes ? clock::monotonicMs() + kAllWorkersReadyWaitMs : 0;
    if (processes)
        QTimer::singleShot(kAllWorkersReadyWaitMs + 10, this, &RuntimeController::onWorkersChanged);
    m_supervisor->setCount(processes ? next.workers : 0);
    onWorkersChanged();
    if (previous.policy != next.policy || !processes)
        assignListeners();
    RuntimeMailbox(m_fleet.control()).publish(next);
    if (!(previous == next))
        EventLog(m_fleet.control())
            .append("switch", QStringLiteral("mode %1, workers %2, threads %3, policy %4")
                                  .arg(modeName(next.mode))
                                  .arg(next.workers)
                                  .arg(next.threads)
                                  .arg(policyName(next.policy)));
    return {};
}

void RuntimeController::onWorkersChanged()
{
    QList<ConnectionDispatcher::WorkerLink> links;
    for (const WorkerSupervisor::Ready &r : m_supervisor->readyWorkers())
        links.append({r.index, ::fcntl(r.channelFd, F_DUPFD_CLOEXEC, 0)});
    const bool processes = m_settings.mode == RuntimeMode::Processes;
    const bool allReady = links.size() >= m_settings.workers || clock::monotonicMs() >= m_workersDeadline;
    // The in-process server stops taking keep-alive requests once the workers serve.
    const bool toWorkers = processes && !links.isEmpty() && allReady;
    QMetaObject::invokeMethod(
        m_in.dispatcher,
        [d = m_in.dispatcher, links, g = m_in.guard, toWorkers, policy = m_settings.policy,
         bound = m_supervisor->settings().workerConnections] {
            d->setPolicy(policy);
            d->setWorkerConnections(bound);
            d->setWorkers(links);
            d->setToWorkers(toWorkers);
            if (toWorkers)
                g->startDraining();
            else
                g->stopDraining();
        },
        Qt::QueuedConnection);
    assignListeners();
}

// Kernel policy: worker i accepts on listener i itself; every listener no worker accepts on is
// accepted by the primary (and dispatched round-robin). Round-robin and least-loaded: the primary
// accepts on all.
void RuntimeController::assignListeners()
{
    const bool kernel = m_settings.mode == RuntimeMode::Processes && m_settings.policy == DistributionPolicy::Kernel;
    QHash<int, int> wanted;
    if (kernel) {
        const auto ready = m_supervisor->readyWorkers();
        QString error;
        if (m_in.listeners->ensureListeners(int(ready.size()) + 1, error)) {
            for (const WorkerSupervisor::Ready &r : ready)
                wanted.insert(r.index, int(wanted.size()) + 1);
        } else {
            EventLog(m_fleet.control()).append("error", error);
        }
    }
    // First let the primary accept again where a worker stops, then tell the worker: in between
    // both accept, and nothing waits unattended in a queue.
    for (auto it = m_listenerOfWorker.begin(); it != m_listenerOfWorker.end();) {
        if (wanted.value(it.key(), -1) == it.value()) {
            ++it;
            continue;
        }
        const int listener = it.value();
        QMetaObject::invokeMethod(
            m_in.listeners, [l = m_in.listeners, listener] { l->setPrimaryAccepts(listener, true); },
            Qt::QueuedConnection);
        m_supervisor->send(it.key(), WorkerMessageType::StopListening);
        it = m_listenerOfWorker.erase(it);
    }
    for (auto it = wanted.begin(); it != wanted.end(); ++it) {
        if (m_listenerOfWorker.value(it.key(), -1) == it.value())
            continue;
        const int listener = it.value();
        if (m_supervisor->send(it.key(), WorkerMessageType::Listen, m_in.listeners->listenerFd(listener))) {
            m_listenerOfWorker.insert(it.key(), listener);
            QMetaObject::invokeMethod(
                m_in.listeners, [l = m_in.listeners, listener] { l->setPrimaryAccepts(listener, false); },
                Qt::QueuedConnection);
        }
    }
}

void RuntimeController::onCrashLoop()
{
    RuntimeSettings fallback = m_settings;
    fallback.mode = RuntimeMode::Pool;
    EventLog(m_fleet.control()).append("fallback", QStringLiteral("workers crash-looping: falling back to pool"));
    apply(fallback);
}

void RuntimeController::shutdown(int graceMs)
{
    m_mailboxTimer.stop();
    archiveEvents();
    m_supervisor->shutdown(graceMs);
}

} // namespace taxicore
