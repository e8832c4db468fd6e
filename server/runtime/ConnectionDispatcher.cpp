#include "runtime/ConnectionDispatcher.h"

#include "fleet/FleetStore.h"
#include "http/ConnectionGuard.h"
#include "region/WorkerProtocol.h"
#include "runtime/WorkerChannel.h"

#include <unistd.h>

namespace taxicore {

ConnectionDispatcher::ConnectionDispatcher(ConnectionGuard &inProcess, const FleetStore &fleet, QObject *parent)
    : QObject(parent)
    , m_inProcess(inProcess)
    , m_fleet(fleet)
{
}

ConnectionDispatcher::~ConnectionDispatcher()
{
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
}

bool ConnectionDispatcher::sendToWorker(int connectionFd, int skipIndex, int offers)
{
    const qsizetype count = m_workers.size();
    const int64_t now = clock::monotonicMs();
    for (qsizetype tried = 0; tried < count; ++tried) {
        const WorkerLink &link = m_workers[(m_next + tried) % count];
        if (link.index == skipIndex)
            continue;
        if (now - m_fleet.workerSlot(link.index).heartbeatMs.load(std::memory_order_relaxed) > kWorkerStaleHeartbeatMs)
            continue;
        const uint32_t id = ++m_nextId;
        if (WorkerChannel(link.channelFd).send(WorkerChannel::Type::Connection, connectionFd, id)) {
            m_next = (m_next + tried + 1) % count;
            // Keep the descriptor until the worker says it adopted it (the socket stays open in
            // the kernel as long as one process holds it).
            m_unconfirmed[link.index].insert(id, Passed{connectionFd, offers + 1});
            return true;
        }
    }
    return false;
}

void ConnectionDispatcher::place(int connectionFd, int skipIndex, int offers)
{
    if (m_toWorkers && offers < m_workers.size() && sendToWorker(connectionFd, skipIndex, offers))
        return;
    m_inProcess.adoptSocket(connectionFd);
}

void ConnectionDispatcher::dispatch(int connectionFd)
{
    place(connectionFd, -1);
}

void ConnectionDispatcher::adopted(int index, uint32_t id)
{
    auto worker = m_unconfirmed.find(index);
    if (worker == m_unconfirmed.end())
        return;
    if (const Passed passed = worker->take(id); passed.fd > 0)
        ::close(passed.fd);
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
