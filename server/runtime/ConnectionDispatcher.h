#pragma once

#include <QHash>
#include <QList>
#include <QObject>

namespace taxicore {

class ConnectionGuard;
class FleetStore;

// Decides who serves each connection the primary accepts (on the I/O thread): the in-process
// server (`single`, `pool`), or a worker process, round-robin, passing the descriptor over its
// channel (`processes`). A connection is never dropped: when no worker takes it, the in-process
// server does.
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

public Q_SLOTS:
    // Called from the control thread through queued invocations.
    void setWorkers(const QList<taxicore::ConnectionDispatcher::WorkerLink> &workers);
    void setToWorkers(bool toWorkers) { m_toWorkers = toWorkers; }
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

    bool sendToWorker(int connectionFd, int skipIndex, int offers);
    void place(int connectionFd, int skipIndex, int offers = 0);
    void closeLinks();

    ConnectionGuard &m_inProcess;
    const FleetStore &m_fleet;
    QList<WorkerLink> m_workers;
    bool m_toWorkers = false;
    qsizetype m_next = 0;
    uint32_t m_nextId = 0;
    // Each connection passed to a worker and not yet adopted, per worker.
    QHash<int, QHash<uint32_t, Passed>> m_unconfirmed;
};

} // namespace taxicore

Q_DECLARE_METATYPE(QList<taxicore::ConnectionDispatcher::WorkerLink>)
