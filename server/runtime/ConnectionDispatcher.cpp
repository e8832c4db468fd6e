#include "runtime/ConnectionDispatcher.h"

#include "fleet/FleetStore.h"
#include "http/ConnectionGuard.h"
#include "region/WorkerProtocol.h"
#include "runtime/WorkerChannel.h"

#include <algorithm>
#include <cerrno>
#include <unistd.h>

namespace taxicore {

namespace {
// least-loaded: a worker with a request in flight whose loop has missed this many milliseconds of
// beats is computing that request now; whatever it is given waits for the whole of it, so it
// comes after every worker that is not, whatever the counts say (they lag: a connection's close
// and its adoption reach the region and the dispatcher late on a loaded machine).
constexpr int64_t kStuckAfterMs = 2 * kWorkerHeartbeatMs;
} // namespace

ConnectionDispatcher::ConnectionDispatcher(ConnectionGuard &inProcess, const FleetStore &fleet, QObject *parent)
    : QObject(parent)
    , m_inProcess(inProcess)
    , m_fleet(fleet)
    , m_waitingTimer(this)
{
    m_waitingTimer.setInterval(kWaitingPollMs);
    connect(&m_waitingTimer, &QTimer::timeout, this, &ConnectionDispatcher::serveWaiting);
}

ConnectionDispatcher::~ConnectionDispatcher()
{
    for (const Waiting &waiting : m_waiting)
        ::close(waiting.fd);
    closeLinks();
}

void ConnectionDispatcher::closeLinks()
{
    for (const WorkerLink &link : std::as_const(m_workers))
        ::close(link.channelFd);
    m_workers.clear();
}

void ConnectionDispatcher::setWorkers(const QList<WorkerLink> &workers)
{
    closeLinks();
    m_workers = workers;
    m_next = 0;
    m_adoptions.clear();
    for (const WorkerLink &link : m_workers)
        m_adoptions.insert(link.index,
                           {m_fleet.workerSlot(link.index).passedAdopted.load(std::memory_order_relaxed), 0});
    serveWaiting();
}

void ConnectionDispatcher::setToWorkers(bool toWorkers)
{
    m_toWorkers = toWorkers;
    serveWaiting(); // without workers, whatever waits goes to the in-process server now
}

void ConnectionDispatcher::setWorkerConnections(int bound)
{
    m_workerConnections = std::clamp(bound, 1, kMaxConnectionsPerWorker);
    serveWaiting();
}

ConnectionDispatcher::Sent ConnectionDispatcher::sendToWorker(int connectionFd, int skipIndex, int offers)
{
    struct Candidate {
        qsizetype position; // in m_workers
        bool stuck;
        uint64_t load;
        qsizetype turn; // distance from m_next: round-robin order, and the tie-break
    };
    const qsizetype count = m_workers.size();
    const int64_t now = clock::monotonicMs();
    Candidate candidates[kMaxWorkerProcesses + 1];
    qsizetype candidateCount = 0;
    bool sawFull = false;
    for (qsizetype turn = 0; turn < count; ++turn) {
        const qsizetype position = (m_next + turn) % count;
        const WorkerLink &link = m_workers[position];
        if (link.index == skipIndex)
            continue;
        const WorkerSlot &slot = m_fleet.workerSlot(link.index);
        const int64_t silentMs = now - slot.heartbeatMs.load(std::memory_order_relaxed);
        if (silentMs > kWorkerStaleHeartbeatMs)
            continue;
        const uint64_t held = heldBy(link.index, slot);
        if (held >= uint64_t(m_workerConnections)) {
            sawFull = true;
            continue;
        }
        // A request in flight weighs like a connection: the worker's loop is busy with it now.
        const bool leastLoaded = m_policy == DistributionPolicy::LeastLoaded;
        const uint64_t inFlight = slot.inFlight.load(std::memory_order_relaxed);
        const uint64_t load = leastLoaded ? held + inFlight : 0;
        const bool stuck = leastLoaded && inFlight > 0 && silentMs > kStuckAfterMs;
        if (candidateCount < qsizetype(std::size(candidates)))
            candidates[candidateCount++] = {position, stuck, load, turn};
    }
    std::sort(candidates, candidates + candidateCount, [](const Candidate &a, const Candidate &b) {
        if (a.stuck != b.stuck)
            return !a.stuck;
        return a.load != b.load ? a.load < b.load : a.turn < b.turn;
    });
    for (qsizetype i = 0; i < candidateCount; ++i) {
        const WorkerLink &link = m_workers[candidates[i].position];
        const uint32_t id = ++m_nextId;
        if (WorkerChannel(link.channelFd).send(WorkerChannel::Type::Connection, connectionFd, id)) {
            m_next = (candidates[i].position + 1) % count;
            // Keep the descriptor until the worker says it adopted it (the socket stays open in
            // the kernel as long as one process holds it).
            m_unconfirmed[link.index].insert(id, Passed{connectionFd, offers + 1});
            return Sent::Yes;
        }
        // Its channel is full (a burst of connections faster than the worker reads them): it is
        // alive, so the connection waits for it like for a worker at its bound.
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            sawFull = true;
    }
    return sawFull ? Sent::AllFull : Sent::NoWorker;
}

void ConnectionDispatcher::place(int connectionFd, int skipIndex, int offers)
{
    if (m_toWorkers && offers < m_workers.size()) {
        switch (sendToWorker(connectionFd, skipIndex, offers)) {
        case Sent::Yes:
            return;
        case Sent::AllFull:
            // Every live worker is at its bound: wait for room, behind those already waiting.
            if (qsizetype(m_waiting.size()) < kMaxWaitingConnections) {
                m_waiting.push_back({connectionFd, skipIndex, offers, clock::monotonicMs()});
                m_waitingTimer.start();
                return;
            }
            break;
        case Sent::NoWorker:
            break;
        }
    }
    m_inProcess.adoptSocket(connectionFd);
}

void ConnectionDispatcher::serveWaiting()
{
    const int64_t now = clock::monotonicMs();
    while (!m_waiting.empty()) {
        const Waiting front = m_waiting.front();
        const bool tooLong = now - front.sinceMs > kMaxConnectionWaitMs;
        if (m_toWorkers && !tooLong && front.offers < m_workers.size()) {
            const Sent sent = sendToWorker(front.fd, front.skipIndex, front.offers);
            if (sent == Sent::AllFull)
                break; // first in, first out: no later connection overtakes this one
            m_waiting.pop_front();
            if (sent == Sent::NoWorker)
                m_inProcess.adoptSocket(front.fd);
            continue;
        }
        m_waiting.pop_front();
        m_inProcess.adoptSocket(front.fd);
    }
    if (m_waiting.empty())
        m_waitingTimer.stop();
}

void ConnectionDispatcher::dispatch(int connectionFd)
{
    if (!m_waiting.empty()) {
        serveWaiting();
        if (!m_waiting.empty() && m_toWorkers) {
            // Older connections still wait: this one queues behind them (or, past the queue's
            // bound, goes to the in-process server).
            if (qsizetype(m_waiting.size()) < kMaxWaitingConnections) {
                m_waiting.push_back({connectionFd, -1, 0, clock::monotonicMs()});
                return;
            }
            m_inProcess.adoptSocket(connectionFd);
            return;
        }
    }
    place(connectionFd, -1);
}

uint64_t ConnectionDispatcher::heldBy(int index, const WorkerSlot &slot) const
{
    // Those it adopted (counted by the worker itself) and those on their way to it. An adoption
    // we have not heard of yet is in both: during a burst of accepts this thread hears of none,
    // and counting them twice sent a burst to whichever worker was slowest to adopt, the busy
    // one. A slot that went back (a new process) subtracts nothing: the bound errs on the safe side.
    const auto passed = m_unconfirmed.constFind(index);
    const uint64_t onTheWay = passed == m_unconfirmed.constEnd() ? 0 : uint64_t(passed->size());
    uint64_t unheard = 0;
    if (const auto counts = m_adoptions.constFind(index); counts != m_adoptions.constEnd()) {
        const uint64_t adopted = slot.passedAdopted.load(std::memory_order_relaxed);
        if (adopted >= counts->base + counts->heard)
            unheard = std::min(adopted - counts->base - counts->heard, onTheWay);
    }
    return slot.openConnections.load(std::memory_order_relaxed) + onTheWay - unheard;
}

void ConnectionDispatcher::adopted(int index, uint32_t id)
{
    auto worker = m_unconfirmed.find(index);
    if (worker == m_unconfirmed.end())
        return;
    if (const Passed passed = worker->take(id); passed.fd > 0) {
        ::close(passed.fd);
        if (const auto counts = m_adoptions.find(index); counts != m_adoptions.end())
            ++counts->heard;
    }
}

void ConnectionDispatcher::declined(int index, uint32_t id)
{
    auto worker = m_unconfirmed.find(index);
    if (worker == m_unconfirmed.end())
        return;
    if (const Passed passed = worker->take(id); passed.fd > 0)
        place(passed.fd, index, passed.offers);
}

void ConnectionDispatcher::workerGone(int index)
{
    const QHash<uint32_t, Passed> orphans = m_unconfirmed.take(index);
    for (const Passed &passed : orphans)
        place(passed.fd, index, passed.offers);
}

} // namespace taxicore
