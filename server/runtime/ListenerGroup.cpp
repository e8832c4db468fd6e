#include "runtime/ListenerGroup.h"

#include "runtime/AcceptLoop.h"

#include <QThread>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace taxicore {

namespace {
constexpr int kListenBacklog = 4096;
} // namespace

ListenerGroup::ListenerGroup(Acceptor acceptor, QObject *parent)
    : QObject(parent)
    , m_acceptor(std::move(acceptor))
{
}

ListenerGroup::~ListenerGroup()
{
    qDeleteAll(m_loops);
    for (int fd : m_fds)
        ::close(fd);
}

int ListenerGroup::listenerFd(int index) const
{
    QMutexLocker lock(&m_mutex);
    return index >= 0 && index < int(m_fds.size()) ? m_fds[std::size_t(index)] : -1;
}

int ListenerGroup::openSocket(QString &error)
{
    const bool v6 = m_address.protocol() == QAbstractSocket::IPv6Protocol;
    const int fd = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        error = QStringLiteral("socket: %1").arg(QString::fromLocal8Bit(std::strerror(errno)));
        return -1;
    }
    const int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
    sockaddr_storage storage{};
    socklen_t length = 0;
    if (v6) {
        auto *a = reinterpret_cast<sockaddr_in6 *>(&storage);
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(m_port);
        const Q_IPV6ADDR raw = m_address.toIPv6Address();
        std::memcpy(&a->sin6_addr, &raw, sizeof raw);
        length = sizeof *a;
    } else {
        auto *a = reinterpret_cast<sockaddr_in *>(&storage);
        a->sin_family = AF_INET;
        a->sin_port = htons(m_port);
        a->sin_addr.s_addr = htonl(m_address.toIPv4Address());
        length = sizeof *a;
    }
    if (::bind(fd, reinterpret_cast<sockaddr *>(&storage), length) != 0 || ::listen(fd, kListenBacklog) != 0) {
        error = QStringLiteral("cannot listen on %1:%2: %3")
                    .arg(m_address.toString())
                    .arg(m_port)
                    .arg(QString::fromLocal8Bit(std::strerror(errno)));
        ::close(fd);
        return -1;
    }
    if (m_port == 0) {
        getsockname(fd, reinterpret_cast<sockaddr *>(&storage), &length);
        m_port = ntohs(v6 ? reinterpret_cast<sockaddr_in6 *>(&storage)->sin6_port
                          : reinterpret_cast<sockaddr_in *>(&storage)->sin_port);
    }
    return fd;
}

bool ListenerGroup::listen(const QHostAddress &address, quint16 port, QString &error)
{
    m_address = address;
    m_port = port;
    // With SO_REUSEPORT a second server on a busy port would silently share it: refuse instead.
    const int probe = ::socket(address.protocol() == QAbstractSocket::IPv6Protocol ? AF_INET6 : AF_INET,
                               SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (port != 0 && probe >= 0) {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(address.toIPv4Address());
        const int one = 1;
        setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        const bool free = address.protocol() == QAbstractSocket::IPv6Protocol
                          || ::bind(probe, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0;
        ::close(probe);
        if (!free) {
            error = QStringLiteral("cannot listen on %1:%2: the address is already in use")
                        .arg(address.toString())
                        .arg(port);
            return false;
        }
    } else if (probe >= 0) {
        ::close(probe);
    }
    return ensureListeners(1, error);
}

bool ListenerGroup::ensureListeners(int count, QString &error)
{
    QMutexLocker lock(&m_mutex);
    if (m_shutDown) {
        error = QStringLiteral("the server is shutting down");
        return false;
    }
    while (int(m_fds.size()) < count) {
        const int fd = openSocket(error);
        if (fd < 0)
            return false;
        const int index = int(m_fds.size());
        m_fds.push_back(fd);
        if (thread() == QThread::currentThread())
            watch(index, fd);
        else
            QMetaObject::invokeMethod(
                this, [this, index, fd] { watch(index, fd); }, Qt::QueuedConnection);
    }
    return true;
}

void ListenerGroup::watch(int index, int fd)
{
    if (int(m_loops.size()) <= index)
        m_loops.resize(std::size_t(index) + 1, nullptr);
    m_loops[std::size_t(index)] = new AcceptLoop(fd, m_acceptor, this);
}

void ListenerGroup::setPrimaryAccepts(int index, bool accepts)
{
    if (index >= 0 && index < int(m_loops.size()) && m_loops[std::size_t(index)])
        m_loops[std::size_t(index)]->setAccepting(accepts);
}

void ListenerGroup::stopAccepting()
{
    for (AcceptLoop *loop : m_loops)
        if (loop)
            loop->stop();
}

void ListenerGroup::shutDown()
{
    QMutexLocker lock(&m_mutex);
    if (m_shutDown)
        return;
    m_shutDown = true;
    for (int fd : m_fds) {
        // Connections already in the queue were accepted by the kernel: serve them, not reset them.
        for (;;) {
            const int connection = ::accept4(fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (connection < 0)
                break;
            QMetaObject::invokeMethod(
                this, [this, connection] { m_acceptor(connection); }, Qt::QueuedConnection);
        }
        // shutdown(), not close(): a worker holding a copy of this socket stops listening too.
        ::shutdown(fd, SHUT_RDWR);
    }
    QMetaObject::invokeMethod(this, &ListenerGroup::stopAccepting, Qt::QueuedConnection);
}

} // namespace taxicore
