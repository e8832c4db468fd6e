#include "eventloop/TimerSchedule.h"

#include <QCoreApplication>
#include <QObject>
#include <QTimerEvent>
#include <QVarLengthArray>
#include <algorithm>
#include <time.h>

namespace taxicore {

namespace {

constexpr qint64 kNsPerMs = 1'000'000;
constexpr qint64 kNsPerSecond = 1'000'000'000;
// A coarse timer may be off by this share of its interval (Qt's promise for CoarseTimer: 5 %).
constexpr qint64 kCoarsePercent = 5;
// Below this a coarse timer's 5 % is under a millisecond: it is kept precise (as Qt does).
constexpr qint64 kCoarseAsPreciseMaxMs = 20;
// From this a coarse timer's 5 % is a second or more: it is kept on whole seconds (as Qt does).
constexpr qint64 kCoarseAsVeryCoarseMinMs = 20'000;
// Boundaries a coarse deadline is rounded to, largest first: the largest whose half fits in the
// timer's 5 % is taken, so timers of similar intervals land on the same instants.
constexpr qint64 kCoarseGrainsMs[] = {1000, 500, 250, 100, 50, 25, 10, 5, 1};

Qt::TimerType effectiveType(Qt::TimerType type, qint64 intervalMs)
{
    if (type != Qt::CoarseTimer)
        return type;
    if (intervalMs <= kCoarseAsPreciseMaxMs)
        return Qt::PreciseTimer;
    if (intervalMs >= kCoarseAsVeryCoarseMinMs)
        return Qt::VeryCoarseTimer;
    return Qt::CoarseTimer;
}

qint64 roundToNearest(qint64 value, qint64 grain)
{
    return (value + grain / 2) / grain * grain;
}

// A very coarse timer counts whole seconds, at least one, so it never turns into a busy timer.
qint64 veryCoarseIntervalNs(qint64 intervalMs)
{
    return std::max<qint64>(1, (intervalMs + 500) / 1000) * kNsPerSecond;
}

qint64 intervalNs(const Qt::TimerType type, qint64 intervalMs)
{
    return type == Qt::VeryCoarseTimer ? veryCoarseIntervalNs(intervalMs) : intervalMs * kNsPerMs;
}

qint64 deadlineFor(Qt::TimerType type, qint64 intervalMs, qint64 expectedNs)
{
    switch (type) {
    case Qt::PreciseTimer:
        return expectedNs;
    case Qt::VeryCoarseTimer:
        return roundToNearest(expectedNs, kNsPerSecond);
    case Qt::CoarseTimer:
        break;
    }
    const qint64 maxGrainMs = intervalMs * kCoarsePercent * 2 / 100;
    for (const qint64 grainMs : kCoarseGrainsMs)
        if (grainMs <= maxGrainMs)
            return roundToNearest(expectedNs, grainMs * kNsPerMs);
    return expectedNs;
}

} // namespace

qint64 TimerSchedule::steadyNowNs()
{
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    return qint64(now.tv_sec) * kNsPerSecond + now.tv_nsec;
}

void TimerSchedule::add(int timerId, qint64 intervalMs, Qt::TimerType type, QObject *object, qint64 nowNs)
{
    remove(timerId); // Qt never reuses a live id, but a stale entry must not survive
    Timer timer;
    timer.object = object;
    timer.intervalMs = std::max<qint64>(0, intervalMs);
    timer.type = type;
    timer.expectedNs = nowNs + intervalNs(effectiveType(type, timer.intervalMs), timer.intervalMs);
    Timer &stored = m_timers.emplace(timerId, timer).first->second;
    schedule(timerId, stored);
    m_byObject[object].push_back(timerId);
}

void TimerSchedule::schedule(int timerId, Timer &timer)
{
    timer.deadlineNs = deadlineFor(effectiveType(timer.type, timer.intervalMs), timer.intervalMs, timer.expectedNs);
    m_byDeadline.emplace(timer.deadlineNs, timerId);
}

void TimerSchedule::unschedule(int timerId, const Timer &timer)
{
    m_byDeadline.erase({timer.deadlineNs, timerId});
}

void TimerSchedule::forgetObject(QObject *object, int timerId)
{
    const auto it = m_byObject.find(object);
    if (it == m_byObject.end())
        return;
    std::vector<int> &ids = it->second;
    ids.erase(std::remove(ids.begin(), ids.end(), timerId), ids.end());
    if (ids.empty())
        m_byObject.erase(it);
}

bool TimerSchedule::remove(int timerId)
{
    const auto it = m_timers.find(timerId);
    if (it == m_timers.end())
        return false;
    unschedule(timerId, it->second);
    forgetObject(it->second.object, timerId);
    m_timers.erase(it);
    return true;
}

bool TimerSchedule::removeAll(QObject *object)
{
    const auto it = m_byObject.find(object);
    if (it == m_byObject.end())
        return false;
    const std::vector<int> ids = std::move(it->second);
    m_byObject.erase(it);
    for (const int timerId : ids) {
        const auto timer = m_timers.find(timerId);
        if (timer == m_timers.end())
            continue;
        unschedule(timerId, timer->second);
        m_timers.erase(timer);
    }
    return true;
}

QList<QAbstractEventDispatcher::TimerInfo> TimerSchedule::timersOf(QObject *object) const
{
    QList<QAbstractEventDispatcher::TimerInfo> list;
    const auto it = m_byObject.find(object);
    if (it == m_byObject.end())
        return list;
    for (const int timerId : it->second) {
        const Timer &timer = m_timers.at(timerId);
        list.append({timerId, int(timer.intervalMs), timer.type});
    }
    return list;
}

int TimerSchedule::remainingMs(int timerId, qint64 nowNs) const
{
    const auto it = m_timers.find(timerId);
    if (it == m_timers.end())
        return -1;
    const qint64 left = it->second.deadlineNs - nowNs;
    return left <= 0 ? 0 : int((left + kNsPerMs - 1) / kNsPerMs);
}

qint64 TimerSchedule::untilNextNs(qint64 nowNs) const
{
    // A timer whose event is running (a nested loop) does not count: it cannot fire until that
    // event returns, and counting it would make the nested loop spin. Few are ever firing.
    for (const auto &[deadlineNs, timerId] : m_byDeadline)
        if (!m_timers.at(timerId).firing)
            return std::max<qint64>(0, deadlineNs - nowNs);
    return -1;
}

int TimerSchedule::fireDue(qint64 nowNs)
{
    // The ids due now, taken before any event runs: a timer started or rescheduled by an event
    // waits for the next call, so a zero timer cannot starve the loop. Local, because an event
    // may run a nested loop that fires timers too.
    QVarLengthArray<int, 64> due;
    for (auto it = m_byDeadline.begin(); it != m_byDeadline.end() && it->first <= nowNs; ++it)
        due.append(it->second);
    int fired = 0;
    for (const int timerId : due) {
        auto it = m_timers.find(timerId);
        if (it == m_timers.end() || it->second.firing || it->second.deadlineNs > nowNs)
            continue; // killed or restarted by an earlier event, or already in its own event
        Timer &timer = it->second;
        unschedule(timerId, timer);
        const qint64 step = intervalNs(effectiveType(timer.type, timer.intervalMs), timer.intervalMs);
        timer.expectedNs += step;
        if (timer.expectedNs < nowNs) // late: skip the missed periods, as Qt does
            timer.expectedNs = nowNs + step;
        schedule(timerId, timer);
        timer.firing = true;
        QObject *object = timer.object;
        QTimerEvent event(timerId);
        QCoreApplication::sendEvent(object, &event);
        ++fired;
        // The event may have killed the timer (and the map may have rehashed): look it up again.
        it = m_timers.find(timerId);
        if (it != m_timers.end())
            it->second.firing = false;
    }
    return fired;
}

} // namespace taxicore
