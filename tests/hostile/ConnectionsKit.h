#pragma once

// Shared by the connection-level hostile tests (accept back-off, feed limits, drain, clock
// step): a server's processes and their CPU time and descriptors from /proc, and many raw
// sockets held open at once. Include after <QTest>.

#include "../runtime/RuntimeKit.h"

#include <QDir>
#include <QFile>
#include <cerrno>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

namespace taxicore::test::hostile {

// The server's pid and its worker processes (direct children), read from /proc. Children are
// listed per thread, and the workers are started from the control thread, so every task counts.
inline QList<qint64> processTree(qint64 pid)
{
    QList<qint64> pids{pid};
    const QStringList tasks = QDir(QStringLiteral("/proc/%1/task").arg(pid)).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    for (const QString &task : tasks) {
        QFile children(QStringLiteral("/proc/%1/task/%2/children").arg(pid).arg(task));
        if (children.open(QIODevice::ReadOnly))
            for (const QByteArray &child : children.readAll().simplified().split(' '))
                if (child.toLongLong() > 0)
                    pids.append(child.toLongLong());
    }
    return pids;
}

// utime + stime of one process in milliseconds; -1 when it is gone.
inline qint64 cpuMs(qint64 pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return -1;
    const QByteArray line = stat.readAll();
    // Fields after the command (which may hold spaces): state is field 3, utime 14, stime 15.
    const QList<QByteArray> fields = line.mid(line.lastIndexOf(')') + 2).split(' ');
    if (fields.size() < 13)
        return -1;
    const long ticks = sysconf(_SC_CLK_TCK);
    return (fields[11].toLongLong() + fields[12].toLongLong()) * 1000 / ticks;
}

// CPU time the server and its workers spent (ms) over `ms` of wall time, events processed meanwhile.
inline qint64 cpuOver(qint64 pid, int ms)
{
    const QList<qint64> pids = processTree(pid);
    qint64 before = 0;
    for (qint64 p : pids)
        before += std::max<qint64>(0, cpuMs(p));
    QTest::qWait(ms);
    qint64 after = 0;
    for (qint64 p : pids)
        after += std::max<qint64>(0, cpuMs(p));
    return after - before;
}

inline int openDescriptors(qint64 pid)
{
    return int(QDir(QStringLiteral("/proc/%1/fd").arg(pid)).entryList(QDir::NoDotAndDotDot | QDir::System).size());
}

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

} // namespace taxicore::test::hostile
