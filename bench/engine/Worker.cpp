#include "Worker.h"

#include "Clock.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <limits>

namespace taxicore::bench {

namespace {

constexpr int kMaxEventsPerWait = 256;
constexpr std::size_t kReadBufferBytes = 64 * 1024;
// Timeouts are checked this often: the precision of a 10 s timeout is a few ms at worst.
constexpr int64_t kTimeoutScanIntervalNs = 10'000'000;
// After a failed connect, wait before trying again rather than spinning on a refusing server.
constexpr int64_t kConnectRetryBackoffNs = 10'000'000;
// Longest sleep in epoll: bounds how late the worker notices a stop request.
constexpr int64_t kMaxWaitNs = 50'000'000;
// The kernel may fire a sleeping thread's timer up to its "slack" late (50 us by default): an
// open-loop schedule wants its wake-ups on time.
constexpr unsigned long kTimerSlackNs = 1'000;

int waitForEvents(int epollFd, epoll_event *events, int64_t waitNs)
{
    // epoll_pwait2 sleeps with nanosecond precision: the open-loop schedule needs better than
    // epoll_wait's milliseconds. Fall back to milliseconds (rounded up) on older kernels.
    static bool havePwait2 = true;
    if (havePwait2) {
        const timespec timeout{static_cast<time_t>(waitNs / kNanosPerSecond),
                               static_cast<long>(waitNs % kNanosPerSecond)};
        const int n = epoll_pwait2(epollFd, events, kMaxEventsPerWait, &timeout, nullptr);
        if (n >= 0 || errno != ENOSYS)
            return n;
        havePwait2 = false;
    }
    const auto waitMs = static_cast<int>((waitNs + 999'999) / 1'000'000);
    return epoll_wait(epollFd, events, kMaxEventsPerWait, waitMs);
}

} // namespace

Worker::Worker(WorkerShared &shared, std::vector<uint32_t> connectionIndices)
    : m_shared(shared)
    , m_settings(*shared.settings)
    , m_connections(connectionIndices.size())
    , m_readBuffer(kReadBufferBytes)
    , m_random(0x7a3c1b2d5e6f4a90ULL
               ^ (connectionIndices.empty() ? 0 : connectionIndices.front() * 0x9e3779b97f4a7c15ULL))
{
    for (std::size_t i = 0; i < connectionIndices.size(); ++i) {
        m_connections[i].globalIndex = connectionIndices[i];
        m_connections[i].source = shared.plan->makeSource(connectionIndices[i]);
    }
    m_stats.setKindCount(shared.plan->kindNames().size());
}

Worker::~Worker()
{
    for (Connection &connection : m_connections)
        closeSocket(connection);
    if (m_epollFd >= 0)
        ::close(m_epollFd);
}

void Worker::run()
{
    m_epollFd = epoll_create1(EPOLL_CLOEXEC);
    prctl(PR_SET_TIMERSLACK, kTimerSlackNs, 0, 0, 0);
    std::array<epoll_event, kMaxEventsPerWait> events{};
    int64_t now = monotonicNowNs();
    scheduleFirstRequests(now);
    m_nextTimeoutScanNs = now + kTimeoutScanIntervalNs;
    while (m_epollFd >= 0) {
        now = monotonicNowNs();
        if (!m_cpuSampled && measuring(now)) {
            m_cpuAtMeasureStartNs = threadCpuNowNs();
            m_cpuSampled = true;
        }
        if (m_shared.stopRequested.load(std::memory_order_relaxed) || now >= m_shared.endNs)
            break;
        if (m_settings.countLimited() && allFinished())
            break;
        runDueWakeUps(now);
        if (now >= m_nextTimeoutScanNs) {
            checkTimeouts(now);
            m_nextTimeoutScanNs = now + kTimeoutScanIntervalNs;
        }
        const int64_t waitNs = std::clamp<int64_t>(nextWakeNs(now) - now, 0, kMaxWaitNs);
        const int ready = waitForEvents(m_epollFd, events.data(), waitNs);
        for (int i = 0; i < ready; ++i)
            handleEvent(m_connections[events[static_cast<std::size_t>(i)].data.u32],
                        events[static_cast<std::size_t>(i)].events);
    }
    if (!m_cpuSampled)
        m_cpuAtMeasureStartNs = threadCpuNowNs();
    m_cpuAtEndNs = threadCpuNowNs();
    m_finishedAtNs = monotonicNowNs();
    for (Connection &connection : m_connections) {
        if (connection.phase != Connection::Phase::Idle && connection.counted)
            m_stats.add(WorkerStats::UnfinishedAtEnd);
        closeSocket(connection);
    }
    m_done = true;
}

void Worker::scheduleFirstRequests(int64_t now)
{
    for (Connection &connection : m_connections) {
        if (m_settings.openLoop()) {
            // Spread the first sends so the whole client sends evenly at `rate`, not in bursts.
            const auto offset = static_cast<int64_t>(static_cast<double>(connection.globalIndex)
                                                     * (static_cast<double>(kNanosPerSecond) / m_settings.rate));
            connection.nextIntendedNs = m_shared.startNs + offset;
            m_wakeUps.emplace(connection.nextIntendedNs, localIndex(connection));
        } else {
            m_wakeUps.emplace(now, localIndex(connection));
        }
    }
}

void Worker::runDueWakeUps(int64_t now)
{
    while (!m_wakeUps.empty() && m_wakeUps.top().first <= now) {
        const auto [wakeNs, index] = m_wakeUps.top();
        m_wakeUps.pop();
        Connection &connection = m_connections[index];
        if (connection.phase != Connection::Phase::Idle || connection.finished)
            continue;
        if (m_settings.openLoop()) {
            // The connection was free and waiting: any delay now is the client's own.
            if (measuring(now))
                m_stats.scheduleLag.record(now - wakeNs);
            startRequest(connection, connection.nextIntendedNs, now);
        } else {
            startRequest(connection, now, now);
        }
    }
}

bool Worker::claimTicket(int64_t now)
{
    if (!measuring(now))
        return true; // warm-up requests are not counted against -n
    return m_shared.ticketsIssued.fetch_add(1, std::memory_order_relaxed) < m_settings.requestCount;
}

void Worker::startRequest(Connection &connection, int64_t intendedNs, int64_t now)
{
    if (m_settings.countLimited() && !claimTicket(now)) {
        connection.finished = true;
        closeSocket(connection);
        return;
    }
    connection.counted = intendedNs >= m_shared.measureStartNs && now >= m_shared.measureStartNs;
    connection.request = connection.source->nextRequest(m_random);
    connection.written = 0;
    connection.intendedNs = intendedNs;
    connection.sentNs = now;
    connection.deadlineNs = now + m_settings.timeout.count();
    connection.retriedStale = false;
    connection.parser.reset(connection.source->wantsBody());
    if (connection.fd < 0) {
        openSocket(connection);
    } else {
        connection.phase = Connection::Phase::Writing;
        writeRequest(connection);
    }
}

void Worker::openSocket(Connection &connection)
{
    const Target &target = *m_shared.target;
    connection.fd = ::socket(target.address.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    connection.requestsOnSocket = 0;
    if (connection.fd < 0) {
        failRequest(connection, WorkerStats::ConnectErrors);
        return;
    }
    const int on = 1;
    ::setsockopt(connection.fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    m_stats.add(WorkerStats::ConnectionsOpened);
    const int rc = ::connect(connection.fd, reinterpret_cast<const sockaddr *>(&target.address), target.addressLength);
    if (rc == 0) {
        connection.phase = Connection::Phase::Writing;
        writeRequest(connection);
    } else if (errno == EINPROGRESS) {
        connection.phase = Connection::Phase::Connecting;
        setInterest(connection, EPOLLOUT);
    } else {
        failRequest(connection, WorkerStats::ConnectErrors);
    }
}

void Worker::finishConnect(Connection &connection)
{
    int error = 0;
    socklen_t length = sizeof error;
    if (::getsockopt(connection.fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0 || error != 0) {
        failRequest(connection, WorkerStats::ConnectErrors);
        return;
    }
    connection.phase = Connection::Phase::Writing;
    writeRequest(connection);
}

void Worker::writeRequest(Connection &connection)
{
    while (connection.written < connection.request.size()) {
        const ssize_t sent = ::send(connection.fd, connection.request.data() + connection.written,
                                    connection.request.size() - connection.written, MSG_NOSIGNAL);
        if (sent > 0) {
            connection.written += static_cast<std::size_t>(sent);
        } else if (sent < 0 && errno == EINTR) {
            continue;
        } else if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            setInterest(connection, EPOLLOUT);
            return;
        } else {
            if (!retryOnFreshSocket(connection))
                failRequest(connection, WorkerStats::WriteErrors);
            return;
        }
    }
    connection.phase = Connection::Phase::Reading;
    setInterest(connection, EPOLLIN);
}

void Worker::readResponse(Connection &connection)
{
    const ssize_t received = ::recv(connection.fd, m_readBuffer.data(), m_readBuffer.size(), 0);
    if (received > 0) {
        if (connection.counted)
            m_stats.add(WorkerStats::BytesRead, static_cast<uint64_t>(received));
        const auto state = connection.parser.feed(m_readBuffer.data(), static_cast<std::size_t>(received));
        if (state == HttpResponseParser::State::Complete)
            completeRequest(connection);
        else if (state == HttpResponseParser::State::Error)
            failRequest(connection, WorkerStats::ReadErrors);
        return;
    }
    if (received < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    // The server closed (received == 0) or reset the connection.
    if (received == 0 && connection.parser.finishOnClose() == HttpResponseParser::State::Complete) {
        completeRequest(connection);
        return;
    }
    if (connection.parser.bytesReceived() == 0 && retryOnFreshSocket(connection))
        return;
    failRequest(connection, WorkerStats::ReadErrors);
}

void Worker::drainIdleSocket(Connection &connection)
{
    // Nothing is expected on an idle keep-alive socket: the server closed it (or sent junk).
    // Drop it quietly; the next request opens a new one.
    closeSocket(connection);
}

bool Worker::retryOnFreshSocket(Connection &connection)
{
    // A keep-alive socket that the server closed while idle fails on first use, before any byte
    // of the response. That is not the request's fault: send it once more on a new socket.
    if (connection.requestsOnSocket == 0 || connection.retriedStale)
        return false;
    closeSocket(connection);
    connection.retriedStale = true;
    connection.written = 0;
    connection.parser.reset(connection.source->wantsBody());
    openSocket(connection);
    return true;
}

void Worker::completeRequest(Connection &connection)
{
    const int64_t now = monotonicNowNs();
    const int status = connection.parser.status();
    const ResponseClass responseClass = connection.source->onResponse(status, connection.parser.body());
    if (connection.counted && now > m_shared.endNs) {
        m_stats.add(WorkerStats::UnfinishedAtEnd); // answered, but after the measured window
    } else if (connection.counted) {
        m_stats.add(WorkerStats::Responses);
        m_stats.corrected.record(now - connection.intendedNs);
        m_stats.uncorrected.record(now - connection.sentNs);
        switch (responseClass) {
        case ResponseClass::Success:
            m_stats.add(WorkerStats::Successes);
            break;
        case ResponseClass::NoCarAvailable:
            m_stats.add(WorkerStats::NoCarAvailable);
            break;
        case ResponseClass::Conflict:
            m_stats.add(WorkerStats::Conflicts);
            break;
        case ResponseClass::HttpError:
            m_stats.add(WorkerStats::HttpErrors);
            m_stats.addStatus(status);
            break;
        }
        m_stats.recordKindResponse(connection.source->kindOfLastRequest(), now - connection.intendedNs,
                                   responseClass == ResponseClass::HttpError);
    }
    ++connection.requestsOnSocket;
    const bool reuse = connection.parser.keepAlive() && m_settings.httpMode == HttpMode::KeepAlive;
    if (!reuse)
        closeSocket(connection);
    connection.phase = Connection::Phase::Idle;
    scheduleNext(connection, now, now);
}

void Worker::failRequest(Connection &connection, WorkerStats::Counter errorClass)
{
    const int64_t now = monotonicNowNs();
    if (connection.counted && now <= m_shared.endNs) {
        m_stats.add(errorClass);
        m_stats.recordKindFailure(connection.source->kindOfLastRequest());
    } else if (connection.counted) {
        m_stats.add(WorkerStats::UnfinishedAtEnd);
    }
    connection.source->onFailure();
    closeSocket(connection);
    connection.phase = Connection::Phase::Idle;
    const int64_t backoff = errorClass == WorkerStats::ConnectErrors ? kConnectRetryBackoffNs : 0;
    // Always through the wake-up queue: a server failing every request synchronously must not
    // turn into unbounded recursion.
    scheduleNext(connection, now, now + std::max<int64_t>(backoff, 1));
}

void Worker::scheduleNext(Connection &connection, int64_t now, int64_t notBeforeNs)
{
    if (connection.finished || m_shared.stopRequested.load(std::memory_order_relaxed) || now >= m_shared.endNs)
        return;
    int64_t wakeNs = notBeforeNs;
    if (m_settings.openLoop()) {
        connection.nextIntendedNs += m_shared.requestIntervalNs;
        wakeNs = std::max(connection.nextIntendedNs, notBeforeNs);
    }
    if (wakeNs <= now) {
        // Behind schedule (the server was slow) or closed loop: send at once. The corrected
        // latency still counts from the intended time.
        startRequest(connection, m_settings.openLoop() ? connection.nextIntendedNs : now, now);
        return;
    }
    m_wakeUps.emplace(wakeNs, localIndex(connection));
}

void Worker::checkTimeouts(int64_t now)
{
    for (Connection &connection : m_connections) {
        if (connection.phase != Connection::Phase::Idle && now >= connection.deadlineNs)
            failRequest(connection, WorkerStats::Timeouts);
    }
}

void Worker::handleEvent(Connection &connection, uint32_t events)
{
    switch (connection.phase) {
    case Connection::Phase::Connecting:
        finishConnect(connection);
        break;
    case Connection::Phase::Writing:
        writeRequest(connection);
        break;
    case Connection::Phase::Reading:
        readResponse(connection);
        break;
    case Connection::Phase::Idle:
        if (connection.fd >= 0 && (events & (EPOLLIN | EPOLLERR | EPOLLHUP)))
            drainIdleSocket(connection);
        break;
    }
}

void Worker::setInterest(Connection &connection, uint32_t events)
{
    if (connection.epollEvents == events || connection.fd < 0)
        return;
    epoll_event event{};
    event.events = events;
    event.data.u32 = localIndex(connection);
    const int op = connection.epollEvents == 0 ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
    if (::epoll_ctl(m_epollFd, op, connection.fd, &event) == 0)
        connection.epollEvents = events;
}

void Worker::closeSocket(Connection &connection)
{
    if (connection.fd >= 0)
        ::close(connection.fd); // closing also removes it from the epoll set
    connection.fd = -1;
    connection.epollEvents = 0;
}

bool Worker::allFinished() const
{
    return std::all_of(m_connections.begin(), m_connections.end(), [](const Connection &connection) {
        return connection.finished && connection.phase == Connection::Phase::Idle;
    });
}

int64_t Worker::nextWakeNs(int64_t now) const
{
    int64_t next = std::min(m_nextTimeoutScanNs, m_shared.endNs);
    if (!m_wakeUps.empty())
        next = std::min(next, m_wakeUps.top().first);
    if (!m_cpuSampled)
        next = std::min(next, m_shared.measureStartNs);
    return std::max(next, now);
}

uint32_t Worker::localIndex(const Connection &connection) const
{
    return static_cast<uint32_t>(&connection - m_connections.data());
}

} // namespace taxicore::bench
