#include "runtime/AcceptLoop.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sys/socket.h>

namespace taxicore {

AcceptLoop::AcceptLoop(int listenFd, Handler handler, QObject *parent)
    : QObject(parent)
    , m_fd(listenFd)
    , m_handler(std::move(handler))
    , m_notifier(listenFd, QSocketNotifier::Read)
{
    connect(&m_notifier, &QSocketNotifier::activated, this, &AcceptLoop::acceptBatch);
    m_backoff.setSingleShot(true);
    m_backoff.setInterval(kBackoffMs);
    connect(&m_backoff, &QTimer::timeout, this, [this] {
        arm();
        acceptBatch(); // the queue may hold connections that no new readiness event announces
    });
}

void AcceptLoop::arm()
{
    m_notifier.setEnabled(m_accepting && !m_stopped && !m_backoff.isActive());
}

void AcceptLoop::setAccepting(bool accepting)
{
    m_accepting = accepting;
    arm();
}

void AcceptLoop::stop()
{
    m_stopped = true;
    m_backoff.stop();
    arm();
}

void AcceptLoop::acceptBatch()
{
    if (!m_accepting || m_stopped || m_backoff.isActive())
        return;
    for (int i = 0; i < kBatch; ++i) {
        const int connection = ::accept4(m_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (connection >= 0) {
            m_inEpisode = false;
            m_handler(connection);
            continue;
        }
        switch (errno) {
        case EINTR:
        case ECONNABORTED: // the client gave up while queued; the next one may be fine
        case EPROTO:
        case EPERM:
            continue;
        case EMFILE:
        case ENFILE:
        case ENOBUFS:
        case ENOMEM:
            backOff(errno);
            return;
        case EINVAL: // shut down (drain): nothing will ever be accepted here again
        case EBADF:
        case ENOTSOCK:
            stop();
            return;
        default: // EAGAIN: the queue is empty, or another process took the connection first
            return;
        }
    }
}

void AcceptLoop::backOff(int error)
{
    if (!m_inEpisode) {
        m_inEpisode = true;
        ++m_episodes;
        std::fprintf(stderr,
                     "taxicore-server: accept: %s; not accepting for %d ms at a time until a connection "
                     "can be taken (logged once until then)\n",
                     std::strerror(error), kBackoffMs);
    }
    m_backoff.start();
    arm();
}

} // namespace taxicore
