#pragma once

// Shared by the connection-level hostile tests (accept back-off, feed limits, drain, clock
// step): many raw sockets held open at once. The server's processes, CPU
// time and descriptors come from tests/support/ProcessInfo.h. Include after <QTest>.

#include "ProcessInfo.h"
#include "RawSocket.h" // connectOnce
#include "RuntimeKit.h"

#include <cerrno>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace taxicore::test::hostile {

// Lets this test process hold more sockets than the default soft limit allows.
inline void raiseOwnFileLimit()
{
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        setrlimit(RLIMIT_NOFILE, &limit);
    }
}

// Plain non-blocking TCP sockets to 127.0.0.1:port, connected without waiting for the server
// to accept them; closed by the destructor.
class SocketHerd {
public:
    SocketHerd() = default;
    SocketHerd(const SocketHerd &) = delete;
    SocketHerd &operator=(const SocketHerd &) = delete;
    ~SocketHerd() { closeAll(); }

    // Opens `count` connections; returns how many were started.
    int open(quint16 port, int count)
    {
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_port = htons(port);
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int started = 0;
        for (int i = 0; i < count; ++i) {
            const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            if (fd < 0)
                break;
            if (::connect(fd, reinterpret_cast<sockaddr *>(&address), sizeof address) != 0 && errno != EINPROGRESS) {
                ::close(fd);
                continue;
            }
            m_fds.push_back(fd);
            ++started;
        }
        return started;
    }
    int size() const { return int(m_fds.size()); }
    void closeAll()
    {
        for (int fd : m_fds)
            ::close(fd);
        m_fds.clear();
    }

private:
    std::vector<int> m_fds;
};

} // namespace taxicore::test::hostile
