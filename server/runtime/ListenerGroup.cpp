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
// Binding a port below this needs root or CAP_NET_BIND_SERVICE (net.ipv4.ip_unprivileged_port_start).
constexpr quint16 kFirstUnprivilegedPort = 1024;

// `address:port` as a socket address of the address's family; returns its length.
socklen_t socketAddress(const QHostAddress &address, quint16 port, sockaddr_storage &storage)
{
    storage = {};
    if (address.protocol() == QAbstractSocket::IPv6Protocol) {
        auto *a = reinterpret_cast<sockaddr_in6 *>(&storage);
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(port);
        const Q_IPV6ADDR raw = address.toIPv6Address();
        std::memcpy(&a->sin6_addr, &raw, sizeof raw);
        return sizeof *a;
    }
    auto *a = reinterpret_cast<sockaddr_in *>(&storage);
    a->sin_family = AF_INET;
    a->sin_port = htons(port);
    a->sin_addr.s_addr = htonl(address.toIPv4Address());
    return sizeof *a;
}

// "cannot listen on HOST:PORT: WHY", in words for the causes an operator meets.
QString listenFailure(const QHostAddress &address, quint16 port, int error)
{
    const QString where = address.protocol() == QAbstractSocket::IPv6Protocol
                              ? QStringLiteral("[%1]:%2").arg(address.toString()).arg(port)
                              : QStringLiteral("%1:%2").arg(address.toString()).arg(port);
    QString why;
    switch (error) {
    case EADDRINUSE:
        why = QStringLiteral("the address is already in use");
        break;
    case EACCES:
        why = port != 0 && port < kFirstUnprivilegedPort
                  ? QStringLiteral("permission denied (a port below %1 needs root or CAP_NET_BIND_SERVICE)")
                        .arg(kFirstUnprivilegedPort)
                  : QStringLiteral("permission denied");
        break;
    case EADDRNOTAVAIL:
        why = QStringLiteral("%1 is not an address of this machine").arg(address.toString());
        break;
    default:
        why = QString::fromLocal8Bit(std::strerror(error));
    }
    return QStringLiteral("cannot listen on %1: %2").arg(where, why);
}

// Our listeners use SO_REUSEPORT (the workers' clones join them), so another process's listener
// on the same port would let us join it and share its traffic. A probe bound without
// SO_REUSEPORT, of the same family and dual-stack setting as the listeners (so `::` meets an IPv4
// listener as the kernel sees it), is refused where another socket listens on the port.
bool portIsFree(const QHostAddress &address, quint16 port, QString &error)
{
    const bool v6 = address.protocol() == QAbstractSocket::IPv6Protocol;
    const int probe = ::socket(v6 ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (probe < 0) {
        error = listenFailure(address, port, errno);
        return false;
    }
    const int one = 1;
    setsockopt(probe, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one); // a port in TIME_WAIT is free
    sockaddr_storage storage;
    const socklen_t length = socketAddress(address, port, storage);
    const bool bound = ::bind(probe, reinterpret_cast<sockaddr *>(&storage), length) == 0;
    const int bindError = errno;
    ::close(probe);
    if (!bound)
        error = listenFailure(address, port, bindError);
    return bound;
}
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
    sockaddr_storage storage;
    socklen_t length = socketAddress(m_address, m_port, storage);
    if (::bind(fd, reinterpret_cast<sockaddr *>(&storage), length) != 0 || ::listen(fd, kListenBacklog) != 0) {
        error = listenFailure(m_address, m_port, errno);
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
    // Port 0 picks a free port: no other process can be on it.
    if (port != 0 && !portIsFree(address, port, error))
        return false;
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
