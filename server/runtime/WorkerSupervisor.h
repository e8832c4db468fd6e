#pragma once

#include "region/WorkerProtocol.h"
#include "wire/ConnectionLimits.h"

#include <QHash>
#include <QList>
#include <QObject>
#include <QStringList>
#include <QTimer>

class QProcess;
class QSocketNotifier;

namespace taxicore {

class FleetStore;
class EventLog;

// Keeps N worker processes (`taxicore-server --worker`) alive under the primary: spawns them
// with the shared region and a channel, notices when each is serving, respawns a crashed one
// with exponential backoff, kills one whose event loop stops beating, and trips a crash-loop
// breaker after too many crashes in a window. Lives on the primary's control thread.
class WorkerSupervisor : public QObject {
    Q_OBJECT
public:
    struct Settings {
        QString program;         // the taxicore-server binary
        QStringList extraArgs;   // e.g. --city PATH
        ConnectionLimits limits; // passed on as flags, so workers enforce what the primary was given
        int regionFd = -1;
        int heartbeatTimeoutMs = kWorkerHeartbeatTimeoutMs;
        int crashLoopCrashes = 5;       // this many crashes ...
        int crashLoopWindowMs = 30'000; // ... within this window trip the breaker
        int drainTimeoutMs = kWorkerDrainTimeoutMs;
        // --worker-connections: the most connections the primary gives one worker at once.
        int workerConnections = kMaxConnectionsPerWorker;
    };

    WorkerSupervisor(FleetStore &fleet, Settings settings, QObject *parent = nullptr);
    ~WorkerSupervisor() override;

    // Runs workers 1..count; workers above `count` drain and exit.
    void setCount(int count);
    int count() const { return m_count; }
    const Settings &settings() const { return m_settings; }
    bool breakerTripped() const { return m_breakerTripped; }
    void resetBreaker()
    {
        m_breakerTripped = false;
        m_crashTimes.clear();
    }

    struct Ready {
        int index;
        int channelFd; // owned by the supervisor; dup() it to keep it
    };
    QList<Ready> readyWorkers() const;
    // Sends a message with an optional descriptor to worker `index`; false if it is not there.
    bool send(int index, WorkerMessageType type, int fd = -1);

    // Stops every worker at once (shutdown): each answers what it owes within `graceMs`, and what
    // has not exited shortly after (kWorkerExitAfterDrainMs) is killed.
    void shutdown(int graceMs);

Q_SIGNALS:
    void readyChanged();
    // A worker answered for passed connection `id`: it took it, or the primary must place it.
    void connectionAdopted(int workerIndex, uint32_t id);
    void connectionDeclined(int workerIndex, uint32_t id);
    // The worker process `pid` is gone: connections passed to it and not adopted must be placed
    // again, and moves it began settled (dispatch/AbandonedMoves).
    void workerGone(int workerIndex, qint64 pid);
    void crashLoop(); // the breaker tripped: no more respawns

private:
    enum class State { Starting, Ready, Draining };
    struct Worker {
        int index = 0;
        QProcess *process = nullptr;
        // Known from the spawn on (QProcess forgets it once the process has finished, and the
        // worker writes its slot's only once it runs): what its exit or crash is reported with.
        qint64 pid = 0;
        int channelFd = -1;
        QSocketNotifier *notifier = nullptr;
        State state = State::Starting;
        qint64 drainDeadline = 0;
        bool killed = false; // by tick(): said once, and its `finished` is awaited
    };

    void spawn(int index);
    void drain(Worker &worker);
    // Tells the worker to drain and to answer what it still owes within `withinMs`.
    static void sendDrain(const Worker &worker, int withinMs);
    void onFinished(int index);
    // A worker that never ran (no channel, no pipes, no fork, no exec) counts as one that crashed.
    void onStartFailed(int index, const QString &reason);
    void countCrash(int index);
    void onChannel(int index);
    void tick();
    void release(Worker &worker);

    FleetStore &m_fleet;
    Settings m_settings;
    QHash<int, Worker> m_workers;
    QHash<int, int> m_recentCrashes; // per slot, for the backoff
    QList<qint64> m_crashTimes;
    int m_count = 0;
    bool m_breakerTripped = false;
    QTimer m_tick;
};

} // namespace taxicore
