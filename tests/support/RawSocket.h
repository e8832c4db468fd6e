#pragma once

// Raw loopback client sockets for tests that must control every byte and every read (slowloris
// trickles, framing a QTcpSocket would buffer, unread pipelines): POSIX calls, no event loop.

#include <QByteArray>
#include <QtGlobal>
#include <arpa/inet.h>
#include <cerrno>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

namespace taxicore::test {

// A blocking-connected (loopback answers at once), then non-blocking, client socket to
// 127.0.0.1:port; -1 on failure.
inline int connectRaw(quint16 port)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0) {
        ::close(fd);
        return -1;
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    return fd;
}

// Sends what the socket takes now; the count sent, or -1 once the peer refused more (reset).
inline qint64 sendSome(int fd, const char *data, qint64 size)
{
    const ssize_t n = ::send(fd, data, size_t(size), MSG_NOSIGNAL);
    if (n >= 0)
        return n;
    return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
}

// True when all of `bytes` went out in one send (small writes on a fresh loopback socket).
inline bool sendAll(int fd, const QByteArray &bytes)
{
    return ::send(fd, bytes.constData(), size_t(bytes.size()), MSG_NOSIGNAL) == bytes.size();
}

// True when the server closed `fd` (end of stream or reset); reads and drops anything else.
inline bool peerClosed(int fd)
{
    char buffer[4096];
    for (;;) {
        const ssize_t n = ::recv(fd, buffer, sizeof buffer, 0);
        if (n == 0)
            return true;
        if (n < 0)
            return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
    }
}

// connect() to 127.0.0.1:port, blocking, bounded by `timeoutMs`; returns 0 when connected, else
// the errno (ECONNREFUSED when nothing listens, ETIMEDOUT when the attempt hangs).
inline int connectOnce(quint16 port, int timeoutMs = 2000)
{
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    timeval timeout{timeoutMs / 1000, (timeoutMs % 1000) * 1000};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int result = ::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) == 0 ? 0 : errno;
    ::close(fd);
    return result == EINPROGRESS || result == EAGAIN ? ETIMEDOUT : result;
}

} // namespace taxicore::test
