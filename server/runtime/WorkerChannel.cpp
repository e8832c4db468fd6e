#include "runtime/WorkerChannel.h"

#include <cerrno>
#include <cstring>
#include <sys/socket.h>
#include <unistd.h>

namespace taxicore {

namespace {
// The send buffer of each end. A burst of connections (1,000 clients connecting at once) is passed
// faster than a worker busy with requests reads its channel; the default buffer (212,992 bytes)
// holds 278 passed connections, and past that the dispatcher gives the rest to another worker, so
// the burst ends up split unevenly (279 : 722 at c=1000) and stays so for as long as the clients
// keep their connections. 1 MiB (Linux doubles it) holds ~2,700 per worker. The kernel caps it at
// net.core.wmem_max: where that is lower, the channel keeps what it gets.
constexpr int kChannelSendBufferBytes = 1 << 20;
} // namespace

bool WorkerChannel::createPair(int fds[2])
{
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds) != 0)
        return false;
    for (int i = 0; i < 2; ++i)
        ::setsockopt(fds[i], SOL_SOCKET, SO_SNDBUF, &kChannelSendBufferBytes, sizeof kChannelSendBufferBytes);
    return true;
}

bool WorkerChannel::send(Type type, int fd, uint32_t id) const
{
    WorkerMessageWire wire{uint32_t(type), fd >= 0 ? 1u : 0u, id};
    iovec iov{&wire, sizeof wire};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    if (fd >= 0) {
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    for (;;) {
        const ssize_t n = ::sendmsg(m_fd, &msg, MSG_NOSIGNAL);
        if (n == ssize_t(sizeof wire))
            return true;
        if (n < 0 && errno == EINTR)
            continue;
        return false; // EAGAIN (a stuck peer) or the peer is gone: the caller decides
    }
}

std::optional<WorkerChannel::Message> WorkerChannel::receive() const
{
    WorkerMessageWire wire{};
    iovec iov{&wire, sizeof wire};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t n;
    do {
        n = ::recvmsg(m_fd, &msg, MSG_CMSG_CLOEXEC);
    } while (n < 0 && errno == EINTR);
    if (n != ssize_t(sizeof wire))
        return std::nullopt;
    Message m{Type(wire.type), -1, wire.id};
    for (cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            std::memcpy(&m.fd, CMSG_DATA(c), sizeof m.fd);
    return m;
}

} // namespace taxicore
