#pragma once

#include "eventloop/TimerSchedule.h"

#include <QAbstractEventDispatcher>
#include <atomic>
#include <vector>

class QSocketNotifier;
struct epoll_event;

namespace taxicore {

// A Qt event dispatcher on Linux epoll, built on Qt's public API only. Qt's own dispatcher hands
// every enabled socket to poll() on every loop iteration, so with 10,000 idle keep-alive
// connections each request waits for 10,000 entries to be copied and checked; here a socket is
// given to the kernel once, when its notifier is enabled, and a loop iteration costs the sockets
// that are ready, not the ones that are open. Wake-ups from other threads go through an eventfd,
// timers through TimerSchedule (Qt's precise / coarse / very coarse meaning).
//
// Install it before a thread has a dispatcher: QThread::setEventDispatcher before start(), or
// QCoreApplication::setEventDispatcher before the application object exists.
class EpollEventDispatcher final : public QAbstractEventDispatcher {
    Q_OBJECT
public:
    explicit EpollEventDispatcher(QObject *parent = nullptr);
    ~EpollEventDispatcher() override;

    bool processEvents(QEventLoop::ProcessEventsFlags flags) override;
    void registerSocketNotifier(QSocketNotifier *notifier) override;
    void unregisterSocketNotifier(QSocketNotifier *notifier) override;
    void registerTimer(int timerId, qint64 interval, Qt::TimerType timerType, QObject *object) override;
    bool unregisterTimer(int timerId) override;
    bool unregisterTimers(QObject *object) override;
    QList<TimerInfo> registeredTimers(QObject *object) const override;
    int remainingTime(int timerId) override;
    void wakeUp() override;
    void interrupt() override;

    // What the loop has done so far, for tests and benchmarks (read on the dispatcher's thread).
    struct Counters {
        quint64 waits = 0;         // epoll_wait / poll calls
        quint64 readyEvents = 0;   // entries those calls returned (wake-ups included)
        quint64 activations = 0;   // QEvent::SockAct sent to a notifier
        quint64 staleEvents = 0;   // entries for a descriptor no longer registered as it was
        quint64 epollRebuilds = 0; // times the epoll set was built anew (see rebuildEpollSet)
        quint64 maskChanges = 0;   // epoll_ctl calls that changed the mask of a descriptor in the set
    };
    Counters counters() const { return m_counters; }
    // Descriptors in the epoll set (the wake-up eventfd excluded).
    int watchedDescriptors() const { return m_watchedCount; }

private:
    // The notifiers of one descriptor: epoll takes one registration per descriptor, so the read,
    // write and exception notifiers share it and its mask is theirs combined.
    struct Watch {
        QSocketNotifier *read = nullptr;
        QSocketNotifier *write = nullptr;
        QSocketNotifier *exception = nullptr;
        quint32 generation = 0; // changes whenever the descriptor enters the set anew
        quint32 events = 0;     // the mask the kernel has (0: not in the set)
        bool pending = false;   // its notifiers changed; the kernel hears before the next wait
    };

    int dispatchReady(const epoll_event *events, int count);
    bool activate(int fd, quint32 generation, int type, quint32 events);
    int activateAlwaysReady();
    void updateWatch(int fd);
    void scheduleWatch(int fd);
    void applyPendingWatches();
    bool addToEpoll(int epollFd, int fd, const Watch &watch);
    void rebuildEpollSet();
    void drainWakeUp();
    Watch *watchOf(int fd);
    static quint32 maskOf(const Watch &watch);

    int m_epollFd = -1;
    int m_wakeFd = -1;
    std::vector<Watch> m_watches; // by descriptor: O(1) lookup on every ready event
    int m_watchedCount = 0;
    quint32 m_nextGeneration = 1;
    std::vector<int> m_pending;         // descriptors whose Watch::pending is set
    std::vector<int> m_alwaysReady;     // descriptors epoll refuses (regular files)
    std::vector<quint64> m_recentStale; // tags seen stale lately (see dispatchReady)
    std::atomic<bool> m_wakeUpPending{false};
    std::atomic<bool> m_interrupted{false};
    TimerSchedule m_timers;
    Counters m_counters;
};

} // namespace taxicore
