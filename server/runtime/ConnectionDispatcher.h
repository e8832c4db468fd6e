#pragma once

#include "control/RuntimeSettings.h"
#include "region/WorkerProtocol.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QTimer>
#include <deque>

namespace taxicore {

class ConnectionGuard;
class FleetStore;
struct WorkerSlot;

// Decides who serves each connection the primary accepts (on the I/O thread): the in-process
// server (`single`, `pool`), or a worker process, passing the descriptor over its channel
// (`processes`): in turn (`round-robin`), or to the worker with the least load now
// (`least-loaded`: open connections + connections passed and not yet adopted + requests in
// flight, read from the region), so a worker stuck in a slow request gets no new client while
// another is idle. No worker is given more than `workerConnections` at once: while every worker
// is at that bound (or its channel is full), connections wait here, oldest first, and are handed
// out as soon as one has room (kMaxWaitingConnections, kMaxConnectionWaitMs in region/WorkerProtocol.h). A connection
// is never dropped: when no worker takes it, the in-process server does.
class ConnectionDispatcher : public QObject {
    Q_OBJECT
public:
    struct WorkerLink {
        int index = 0;
        int channelFd = -1; // the dispatcher's own duplicate, closed when replaced
    };

    ConnectionDispatcher(ConnectionGuard &inProcess, const FleetStore &fleet, QObject *parent = nullptr);
    ~ConnectionDispatcher() override;

    void dispatch(int connectionFd);
    // Connections waiting for a worker under its bound (for tests and diagnostics).
    int waitingConnections() const { return int(m_waiting.size()); }

public Q_SLOTS:
    // Called from the control thread through queued invocations.
    void setWorkers(const QList<taxicore::ConnectionDispatcher::WorkerLink> &workers);
    void setToWorkers(bool toWorkers);
    void setPolicy(taxicore::DistributionPolicy policy) { m_policy = policy; }
    // The most connections one worker is given at once (--worker-connections).
    void setWorkerConnections(int bound);
    // Worker `index` took passed connection `id`: our copy can go.
    void adopted(int index, uint32_t id);
    // Worker `index` declined it: offer it to the others, else serve it here.
    void declined(int index, uint32_t id);
    // Worker `index` died: every connection passed to it and not yet adopted is placed again
    // (its bytes are still unread in the kernel), so a crash loses only what the worker held.
    void workerGone(int index);

private:
    // A connection passed to a worker and not yet adopted: our duplicate, and how many workers
    // were offered it (each declines at most once, so two declining workers cannot pass it back
    // and forth for ever).
    struct Passed {
        int fd = -1;
        int offers = 0;
    };
    // A connection waiting for a worker under its bound.
    struct Waiting {
        int fd = -1;
        int skipIndex = -1;
        int offers = 0;
        int64_t sinceMs = 0;
    };
    enum class Sent { Yes, AllFull, NoWorker };

    Sent sendToWorker(int connectionFd, int skipIndex, int offers);
    void place(int connectionFd, int skipIndex, int offers = 0);
    // Hands out waiting connections, oldest first, while workers have room.
    void serveWaiting();
    void closeLinks();

    ConnectionGuard &m_inProcess;
    const FleetStore &m_fleet;
    QList<WorkerLink> m_workers;
    bool m_toWorkers = false;
    DistributionPolicy m_policy = DistributionPolicy::RoundRobin;
    int m_workerConnections = kMaxConnectionsPerWorker;
    qsizetype m_next = 0;
    uint32_t m_nextId = 0;
    // Each connection passed to a worker and not yet adopted, per worker.
    QHash<int, QHash<uint32_t, Passed>> m_unconfirmed;
    // Per worker: its slot's passedAdopted when its link came, and the adoptions heard of since.
    // Their difference is what it adopted and we have not heard of yet: counted in its open
    // connections and still in m_unconfirmed, so least-loaded subtracts it once.
    struct Adoptions {
        uint64_t base = 0;
        uint64_t heard = 0;
    };
    QHash<int, Adoptions> m_adoptions;
    // The connections worker `index` holds: open there, plus passed and not yet adopted.
    uint64_t heldBy(int index, const WorkerSlot &slot) const;
    std::deque<Waiting> m_waiting;
    QTimer m_waitingTimer; // runs while connections wait: a worker's room shows only in the region
};

} // namespace taxicore

Q_DECLARE_METATYPE(QList<taxicore::ConnectionDispatcher::WorkerLink>)
