#pragma once

#include <QAbstractEventDispatcher>
#include <QList>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

class QObject;

namespace taxicore {

// The timers of one event dispatcher, ordered by deadline, with Qt's meaning of the timer types:
// PreciseTimer fires at its interval (to the millisecond the wait allows), CoarseTimer within 5 %
// of it, rounded to a shared boundary so timers of one loop wake it together (at or below 20 ms
// it is precise, from 20 s very coarse), VeryCoarseTimer on whole seconds. Adding, removing and
// finding the next deadline cost O(log timers); firing costs O(due timers), never O(all).
// Times are CLOCK_MONOTONIC nanoseconds (steadyNowNs()).
class TimerSchedule {
public:
    void add(int timerId, qint64 intervalMs, Qt::TimerType type, QObject *object, qint64 nowNs);
    bool remove(int timerId);
    bool removeAll(QObject *object);
    QList<QAbstractEventDispatcher::TimerInfo> timersOf(QObject *object) const;
    // Milliseconds until the timer is due (0 when overdue), -1 for an unknown id.
    int remainingMs(int timerId, qint64 nowNs) const;
    // Nanoseconds until the earliest deadline (0 when one is due), -1 without timers.
    qint64 untilNextNs(qint64 nowNs) const;
    // Sends a QTimerEvent to the object of every timer due at nowNs, each at most once, in
    // deadline order; a timer is rescheduled before its event, so it may kill or restart itself,
    // and is not fired again by a loop nested in its own event. Returns how many fired.
    int fireDue(qint64 nowNs);
    bool isEmpty() const { return m_timers.empty(); }

    static qint64 steadyNowNs();

private:
    struct Timer {
        QObject *object = nullptr;
        qint64 intervalMs = 0;
        Qt::TimerType type = Qt::CoarseTimer;
        qint64 expectedNs = 0; // the deadline the interval asks for
        qint64 deadlineNs = 0; // when it fires: expectedNs rounded for coarse timers
        bool firing = false;   // its event is being delivered
    };

    void schedule(int timerId, Timer &timer);
    void unschedule(int timerId, const Timer &timer);
    void forgetObject(QObject *object, int timerId);

    std::unordered_map<int, Timer> m_timers;
    std::set<std::pair<qint64, int>> m_byDeadline;
    std::unordered_map<QObject *, std::vector<int>> m_byObject; // unregisterTimers without a scan
};

} // namespace taxicore
