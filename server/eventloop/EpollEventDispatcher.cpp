#include "eventloop/EpollEventDispatcher.h"

#include <QCoreApplication>
#include <QSocketNotifier>
#include <QVarLengthArray>
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

namespace taxicore {

namespace {

// Ready entries taken per epoll_wait. Level-triggered: what does not fit comes back next time.
constexpr int kMaxEventsPerWait = 256;
// The wake-up eventfd's tag; a socket's tag is its descriptor (low 32 bits) and generation.
constexpr quint64 kWakeTag = ~quint64(0);
// Stale tags remembered to tell a leaked registration (it comes back) from a passing one.
constexpr std::size_t kRecentStaleTags = 64;

// Which conditions activate which notifier, as Qt's poll() dispatcher has them: a hang-up or an
// error is news for the reader (it reads the end of the stream or the error), an error also for
// the writer; urgent data for the exception notifier.
constexpr quint32 kReadEvents = EPOLLIN | EPOLLHUP | EPOLLERR;
constexpr quint32 kWriteEvents = EPOLLOUT | EPOLLERR;
constexpr quint32 kExceptionEvents = EPOLLPRI;

quint64 tagOf(int fd, quint32 generation)
{
    return (quint64(generation) << 32) | quint32(fd);
}

int waitTimeoutMs(qint64 untilNextNs)
{
    if (untilNextNs < 0)
        return -1;
    // Rounded up: a timer is never woken for before its deadline.
    return int(std::min<qint64>(INT_MAX, (untilNextNs + 999'999) / 1'000'000));
}

} // namespace

EpollEventDispatcher::EpollEventDispatcher(QObject *parent)
    : QAbstractEventDispatcher(parent)
{
    m_epollFd = ::epoll_create1(EPOLL_CLOEXEC);
    m_wakeFd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (m_epollFd < 0 || m_wakeFd < 0)
        qFatal("EpollEventDispatcher: cannot create its epoll or eventfd descriptor: %s", std::strerror(errno));
    epoll_event wake{};
    wake.events = EPOLLIN;
    wake.data.u64 = kWakeTag;
    if (::epoll_ctl(m_epollFd, EPOLL_CTL_ADD, m_wakeFd, &wake) != 0)
        qFatal("EpollEventDispatcher: cannot watch its eventfd: %s", std::strerror(errno));
}

EpollEventDispatcher::~EpollEventDispatcher()
{
    ::close(m_wakeFd);
    ::close(m_epollFd);
}

bool EpollEventDispatcher::processEvents(QEventLoop::ProcessEventsFlags flags)
{
    m_interrupted.store(false, std::memory_order_relaxed);
    Q_EMIT awake();
    // Posted events first, each iteration: one posted from another thread after this call has
    // also written the eventfd, so the wait below cannot sleep over it.
    QCoreApplication::sendPostedEvents();

    const bool includeTimers = !flags.testFlag(QEventLoop::X11ExcludeTimers);
    const bool includeSockets = !flags.testFlag(QEventLoop::ExcludeSocketNotifiers);
    const bool mayWait = flags.testFlag(QEventLoop::WaitForMoreEvents) && !m_interrupted.load(std::memory_order_relaxed)
                         && m_alwaysReady.empty();
    if (mayWait)
        Q_EMIT aboutToBlock();
    if (m_interrupted.load(std::memory_order_relaxed))
        return false;

    int timeoutMs = 0;
    if (mayWait)
        timeoutMs = includeTimers ? waitTimeoutMs(m_timers.untilNextNs(TimerSchedule::steadyNowNs())) : -1;

    int handled = 0;
    ++m_counters.waits;
    if (includeSockets) {
        applyPendingWatches();
        epoll_event events[kMaxEventsPerWait];
        const int count = ::epoll_wait(m_epollFd, events, kMaxEventsPerWait, timeoutMs);
        if (count < 0 && errno != EINTR)
            qWarning("EpollEventDispatcher: epoll_wait: %s", std::strerror(errno));
        if (count > 0) {
            m_counters.readyEvents += quint64(count);
            handled += dispatchReady(events, count);
        }
        handled += activateAlwaysReady();
    } else {
        // Sockets excluded: only a wake-up (or a timer) ends the wait, whatever the sockets do.
        pollfd wake{m_wakeFd, POLLIN, 0};
        if (::poll(&wake, 1, timeoutMs) > 0) {
            ++m_counters.readyEvents;
            drainWakeUp();
            ++handled;
        }
    }
    if (includeTimers)
        handled += m_timers.fireDue(TimerSchedule::steadyNowNs());
    return handled > 0;
}

int EpollEventDispatcher::dispatchReady(const epoll_event *events, int count)
{
    int handled = 0;
    QVarLengthArray<quint64, 8> stale;
    for (int i = 0; i < count; ++i) {
        const quint64 tag = events[i].data.u64;
        if (tag == kWakeTag) {
            drainWakeUp();
            ++handled;
            continue;
        }
        const int fd = int(quint32(tag));
        const quint32 generation = quint32(tag >> 32);
        const Watch *watch = watchOf(fd);
        if (!watch || watch->generation != generation) {
            // Its notifier went away earlier in this batch, or the descriptor was closed while
            // its notifier was still enabled (see rebuildEpollSet).
            ++m_counters.staleEvents;
            stale.append(tag);
            continue;
        }
        // Read, write, exception, as Qt orders them. Each is looked up again after the one
        // before ran: its handler may have disabled or deleted the others, or closed the socket.
        const quint32 ready = events[i].events;
        handled += activate(fd, generation, QSocketNotifier::Read, ready);
        handled += activate(fd, generation, QSocketNotifier::Write, ready);
        handled += activate(fd, generation, QSocketNotifier::Exception, ready);
    }
    // A tag that was stale before and is returned again belongs to a registration nothing can
    // remove any more: the descriptor was closed while watched and its file is still open
    // elsewhere (a dup, a child). Level-triggered, it would wake every wait; start a new set.
    bool leaked = false;
    for (const quint64 tag : stale)
        leaked = leaked || std::find(m_recentStale.begin(), m_recentStale.end(), tag) != m_recentStale.end();
    if (leaked) {
        rebuildEpollSet();
    } else {
        for (const quint64 tag : stale) {
            if (m_recentStale.size() == kRecentStaleTags)
                m_recentStale.erase(m_recentStale.begin());
            m_recentStale.push_back(tag);
        }
    }
    return handled;
}

bool EpollEventDispatcher::activate(int fd, quint32 generation, int type, quint32 ready)
{
    const Watch *watch = watchOf(fd);
    if (!watch || watch->generation != generation)
        return false;
    QSocketNotifier *notifier = nullptr;
    quint32 wanted = 0;
    switch (type) {
    case QSocketNotifier::Read:
        notifier = watch->read;
        wanted = kReadEvents;
        break;
    case QSocketNotifier::Write:
        notifier = watch->write;
        // A hang-up with nobody reading goes to the writer: it is told, not woken forever.
        wanted = watch->read ? kWriteEvents : kWriteEvents | EPOLLHUP;
        break;
    default:
        notifier = watch->exception;
        wanted = kExceptionEvents;
    }
    if (!notifier || !(ready & wanted))
        return false;
    ++m_counters.activations;
    QEvent event(QEvent::SockAct);
    QCoreApplication::sendEvent(notifier, &event);
    return true;
}

int EpollEventDispatcher::activateAlwaysReady()
{
    // Regular files cannot be in an epoll set; poll() calls them always ready, and so do we.
    int handled = 0;
    const std::vector<int> fds = m_alwaysReady; // a handler may change the list
    for (const int fd : fds) {
        const Watch *watch = watchOf(fd);
        if (!watch)
            continue;
        const quint32 generation = watch->generation;
        handled += activate(fd, generation, QSocketNotifier::Read, EPOLLIN);
        handled += activate(fd, generation, QSocketNotifier::Write, EPOLLOUT);
    }
    return handled;
}

EpollEventDispatcher::Watch *EpollEventDispatcher::watchOf(int fd)
{
    if (fd < 0 || std::size_t(fd) >= m_watches.size())
        return nullptr;
    Watch &watch = m_watches[std::size_t(fd)];
    return (watch.read || watch.write || watch.exception) ? &watch : nullptr;
}

void EpollEventDispatcher::registerSocketNotifier(QSocketNotifier *notifier)
{
    const int fd = int(notifier->socket());
    if (fd < 0) {
        qWarning("EpollEventDispatcher: a socket notifier with no descriptor");
        return;
    }
    if (std::size_t(fd) >= m_watches.size())
        m_watches.resize(std::max<std::size_t>(std::size_t(fd) + 1, m_watches.size() * 2));
    Watch &watch = m_watches[std::size_t(fd)];
    QSocketNotifier **slot = notifier->type() == QSocketNotifier::Read    ? &watch.read
                             : notifier->type() == QSocketNotifier::Write ? &watch.write
                                                                          : &watch.exception;
    if (*slot && *slot != notifier)
        qWarning("EpollEventDispatcher: several socket notifiers of one type for descriptor %d", fd);
    *slot = notifier;
    scheduleWatch(fd);
}

void EpollEventDispatcher::unregisterSocketNotifier(QSocketNotifier *notifier)
{
    const int fd = int(notifier->socket());
    if (fd < 0 || std::size_t(fd) >= m_watches.size())
        return;
    Watch &watch = m_watches[std::size_t(fd)];
    for (QSocketNotifier **slot : {&watch.read, &watch.write, &watch.exception})
        if (*slot == notifier)
            *slot = nullptr;
    scheduleWatch(fd);
}

quint32 EpollEventDispatcher::maskOf(const Watch &watch)
{
    return (watch.read ? quint32(EPOLLIN) : 0u) | (watch.write ? quint32(EPOLLOUT) : 0u)
           | (watch.exception ? quint32(EPOLLPRI) : 0u);
}

// A socket's write notifier is enabled by every QAbstractSocket::write and disabled again by the
// flush() that follows (ConnectionGuard::deliver), so each answer switched EPOLLOUT on and off:
// two epoll_ctl calls per request. A change between two non-empty masks therefore waits for the
// next wait and collapses into what the notifiers want then, usually nothing. Entering and
// leaving the set stay immediate: a descriptor that leaves may be closed and its number reused,
// and the new generation is what tells its stale events apart.
void EpollEventDispatcher::scheduleWatch(int fd)
{
    Watch &watch = m_watches[std::size_t(fd)];
    if (watch.events == 0 || maskOf(watch) == 0) {
        updateWatch(fd);
        return;
    }
    if (!watch.pending) {
        watch.pending = true;
        m_pending.push_back(fd);
    }
}

void EpollEventDispatcher::applyPendingWatches()
{
    for (const int fd : m_pending) {
        Watch &watch = m_watches[std::size_t(fd)];
        if (!watch.pending)
            continue;
        watch.pending = false;
        if (watch.events != 0 && maskOf(watch) != 0) // else it entered or left the set meanwhile
            updateWatch(fd);
    }
    m_pending.clear();
}

bool EpollEventDispatcher::addToEpoll(int epollFd, int fd, const Watch &watch)
{
    epoll_event event{};
    event.events = watch.events;
    event.data.u64 = tagOf(fd, watch.generation);
    if (::epoll_ctl(epollFd, EPOLL_CTL_ADD, fd, &event) == 0)
        return true;
    return errno == EEXIST && ::epoll_ctl(epollFd, EPOLL_CTL_MOD, fd, &event) == 0;
}

void EpollEventDispatcher::updateWatch(int fd)
{
    Watch &watch = m_watches[std::size_t(fd)];
    const quint32 events = maskOf(watch);
    if (events == watch.events)
        return;
    const auto alwaysReady = std::find(m_alwaysReady.begin(), m_alwaysReady.end(), fd);
    if (alwaysReady != m_alwaysReady.end()) {
        watch.events = events;
        if (events == 0)
            m_alwaysReady.erase(alwaysReady);
        return;
    }
    if (events == 0) {
        // Errors ignored: the descriptor may be closed already, which left the set by itself.
        ::epoll_ctl(m_epollFd, EPOLL_CTL_DEL, fd, nullptr);
        watch.events = 0;
        --m_watchedCount;
        return;
    }
    const bool added = watch.events == 0;
    if (added)
        watch.generation = m_nextGeneration++;
    watch.events = events;
    epoll_event event{};
    event.events = events;
    event.data.u64 = tagOf(fd, watch.generation);
    bool ok = false;
    if (added) {
        ok = addToEpoll(m_epollFd, fd, watch);
    } else {
        ++m_counters.maskChanges;
        // ENOENT: the descriptor was closed and reopened under the same number meanwhile.
        ok = ::epoll_ctl(m_epollFd, EPOLL_CTL_MOD, fd, &event) == 0
             || (errno == ENOENT && ::epoll_ctl(m_epollFd, EPOLL_CTL_ADD, fd, &event) == 0);
    }
    if (ok) {
        m_watchedCount += added ? 1 : 0;
        return;
    }
    if (errno == EPERM) { // a regular file: poll() semantics, always ready
        m_alwaysReady.push_back(fd);
        return;
    }
    qWarning("EpollEventDispatcher: cannot watch descriptor %d: %s", fd, std::strerror(errno));
    watch.events = 0;
    if (!added)
        --m_watchedCount;
}

void EpollEventDispatcher::rebuildEpollSet()
{
    ++m_counters.epollRebuilds;
    if (m_counters.epollRebuilds == 1)
        qWarning("EpollEventDispatcher: a descriptor was closed while its socket notifier was enabled and its file "
                 "is still open elsewhere; the epoll set is built anew (disable notifiers before closing)");
    const int fresh = ::epoll_create1(EPOLL_CLOEXEC);
    if (fresh < 0) {
        qWarning("EpollEventDispatcher: epoll_create1: %s", std::strerror(errno));
        return;
    }
    epoll_event wake{};
    wake.events = EPOLLIN;
    wake.data.u64 = kWakeTag;
    ::epoll_ctl(fresh, EPOLL_CTL_ADD, m_wakeFd, &wake);
    m_watchedCount = 0;
    for (std::size_t fd = 0; fd < m_watches.size(); ++fd) {
        Watch &watch = m_watches[fd];
        if (watch.events == 0 || std::find(m_alwaysReady.begin(), m_alwaysReady.end(), int(fd)) != m_alwaysReady.end())
            continue;
        if (addToEpoll(fresh, int(fd), watch))
            ++m_watchedCount;
        else
            watch.events = 0; // closed under its notifier: nothing left to watch
    }
    ::close(m_epollFd);
    m_epollFd = fresh;
    m_recentStale.clear();
}

void EpollEventDispatcher::registerTimer(int timerId, qint64 interval, Qt::TimerType timerType, QObject *object)
{
    m_timers.add(timerId, interval, timerType, object, TimerSchedule::steadyNowNs());
}

bool EpollEventDispatcher::unregisterTimer(int timerId)
{
    return m_timers.remove(timerId);
}

bool EpollEventDispatcher::unregisterTimers(QObject *object)
{
    return m_timers.removeAll(object);
}

QList<QAbstractEventDispatcher::TimerInfo> EpollEventDispatcher::registeredTimers(QObject *object) const
{
    return m_timers.timersOf(object);
}

int EpollEventDispatcher::remainingTime(int timerId)
{
    return m_timers.remainingMs(timerId, TimerSchedule::steadyNowNs());
}

void EpollEventDispatcher::wakeUp()
{
    // One write per sleep, however many threads post: the flag stays set until the loop reads.
    if (m_wakeUpPending.exchange(true, std::memory_order_acq_rel))
        return;
    const quint64 one = 1;
    while (::write(m_wakeFd, &one, sizeof one) < 0 && errno == EINTR) {
    }
}

void EpollEventDispatcher::drainWakeUp()
{
    quint64 count = 0;
    while (::read(m_wakeFd, &count, sizeof count) < 0 && errno == EINTR) {
    }
    m_wakeUpPending.store(false, std::memory_order_release);
}

void EpollEventDispatcher::interrupt()
{
    m_interrupted.store(true, std::memory_order_relaxed);
    wakeUp();
}

} // namespace taxicore
