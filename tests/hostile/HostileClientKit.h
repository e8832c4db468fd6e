#pragma once

// Shared by the framing and memory tests of tests/hostile: the mode a ctest runs in, a server
// serving in that mode, raw loopback sockets, and the resident memory of the server's processes.
// Include after <QTest>.

#include "../hardening/ConnectionKit.h" // startServing: processes mode waits for its workers

#include <QDir>
#include <QFile>
#include <arpa/inet.h>
#include <cerrno>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace taxicore::test::hostile {

// ctest runs each hostile executable once per mode: $TAXICORE_HOSTILE_MODE.
inline QString modeUnderTest()
{
    const QString mode = qEnvironmentVariable("TAXICORE_HOSTILE_MODE", QStringLiteral("single"));
    return mode;
}

inline QStringList serverArgs(const QString &mode)
{
    return {QStringLiteral("--mode"), mode, QStringLiteral("--workers"), QStringLiteral("2"), QStringLiteral("--cars"),
            QStringLiteral("50")};
}

// A blocking-connected, then non-blocking, loopback client socket (-1 on failure).
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

// Resident memory of one process in KiB (VmRSS), 0 when it is gone.
inline qint64 rssKiB(qint64 pid)
{
    QFile status(QStringLiteral("/proc/%1/status").arg(pid));
    if (!status.open(QIODevice::ReadOnly))
        return 0;
    for (const QByteArray &line : status.readAll().split('\n'))
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').value(0).toLongLong();
    return 0;
}

// The parent pid of `pid` from /proc/PID/stat (field 4, after the parenthesised name).
inline qint64 parentOf(const QString &pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return -1;
    const QByteArray line = stat.readAll();
    const qsizetype close = line.lastIndexOf(')');
    return close < 0 ? -1 : line.mid(close + 2).split(' ').value(1).toLongLong();
}

// VmRSS summed over `pid` and every process descending from it (the worker processes), in KiB.
inline qint64 treeRssKiB(qint64 pid)
{
    QList<qint64> tree{pid};
    const QStringList entries = QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
    QList<QPair<qint64, qint64>> parents; // (pid, ppid) of every process
    for (const QString &entry : entries) {
        bool numeric = false;
        const qint64 child = entry.toLongLong(&numeric);
        if (numeric)
            parents.append({child, parentOf(entry)});
    }
    for (qsizetype i = 0; i < tree.size(); ++i)
        for (const auto &[child, parent] : parents)
            if (parent == tree[i])
                tree.append(child);
    qint64 total = 0;
    for (qint64 p : tree)
        total += rssKiB(p);
    return total;
}

} // namespace taxicore::test::hostile
