#pragma once

#include "control/RuntimeSettings.h"
#include "runtime/WorkerSupervisor.h"

#include <QObject>
#include <QTimer>
#include <memory>

class QThreadPool;

namespace taxicore {

class ConnectionDispatcher;
class ConnectionGuard;
class FleetStore;
class HttpService;
class Ledger;
class ListenerGroup;

// Switches the execution model while serving, without failing a request (issue: execution
// modes). Lives on the primary's control thread; it never blocks on the I/O thread, only posts
// to it, so an admin request served there can wait for it. New connections go to the new mode;
// old ones finish their request and are closed after a response saying Connection: close.
class RuntimeController : public QObject {
    Q_OBJECT
public:
    struct InProcess {
        ListenerGroup *listeners;
        ConnectionDispatcher *dispatcher;
        ConnectionGuard *guard;
        HttpService *service;
        QThreadPool *pool;
    };

    // `ledger` (may be null) receives the run's events: switches, crashes, respawns.
    RuntimeController(FleetStore &fleet, InProcess inProcess, WorkerSupervisor::Settings workers,
                      Ledger *ledger = nullptr, QObject *parent = nullptr);
    ~RuntimeController() override;

    // Applies new settings; an empty string when done, else why not.
    QString apply(const RuntimeSettings &settings);
    RuntimeSettings settings() const { return m_settings; }
    void shutdown(int graceMs);

private:
    void pollMailbox();
    void archiveEvents();
    void onWorkersChanged();
    void onCrashLoop();
    // Settles the moves dead worker `pid` began and did not settle (dispatch/AbandonedMoves).
    void settleMovesOf(int pid);
    void assignListeners();

    FleetStore &m_fleet;
    InProcess m_in;
    std::unique_ptr<WorkerSupervisor> m_supervisor;
    RuntimeSettings m_settings;
    QHash<int, int> m_listenerOfWorker; // worker index → listener it accepts on (kernel policy)
    QTimer m_mailboxTimer;
    Ledger *m_ledger;
    uint64_t m_archivedEvents = 0;
    qint64 m_workersDeadline = 0;
};

} // namespace taxicore
