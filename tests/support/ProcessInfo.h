#pragma once

// A server's processes as /proc shows them: the primary and its workers, their CPU time,
// descriptors and resident memory. Linux only; include after <QTest>.

#include "Wait.h"

#include <QDir>
#include <QFile>
#include <QList>
#include <QPair>
#include <algorithm>
#include <sys/resource.h>
#include <unistd.h>

namespace taxicore::test {

// Lowers (or restores) the soft file-size limit (RLIMIT_FSIZE) of each of `pids`: at 1 byte the
// server's next write past a file's end fails with EFBIG, as on a full disk (the server ignores
// SIGXFSZ); restored, the soft limit is the hard one again. False when a prlimit call failed.
inline bool limitFileSize(const QList<qint64> &pids, bool broken)
{
    for (const qint64 pid : pids) {
        rlimit current{};
        if (::prlimit(pid_t(pid), RLIMIT_FSIZE, nullptr, &current) != 0)
            return false;
        current.rlim_cur = broken ? 1 : current.rlim_max;
        if (::prlimit(pid_t(pid), RLIMIT_FSIZE, &current, nullptr) != 0)
            return false;
    }
    return true;
}

// The server's pid and its worker processes (direct children), read from /proc. Children are
// listed per thread, and the workers are started from the control thread, so every task counts.
inline QList<qint64> processTree(qint64 pid)
{
    QList<qint64> pids{pid};
    const QStringList tasks =
        QDir(QStringLiteral("/proc/%1/task").arg(pid)).entryList(QDir::Dirs | QDir::NoDotAndDotDot);
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

// utime + stime of `pid` and its workers (processTree), in milliseconds.
inline qint64 treeCpuMs(qint64 pid)
{
    qint64 total = 0;
    for (qint64 p : processTree(pid))
        total += std::max<qint64>(0, cpuMs(p));
    return total;
}

// CPU time the server and its workers spent (ms) over `ms` of wall time, events processed
// meanwhile. A fixed interval on purpose: it measures a rate, there is nothing to wait for.
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

// Whether `pid` has a handler of its own for `signalNumber` (SigCgt in /proc/PID/status): until
// then the signal takes its default action. False when the process is gone.
inline bool catchesSignal(qint64 pid, int signalNumber)
{
    QFile status(QStringLiteral("/proc/%1/status").arg(pid));
    if (!status.open(QIODevice::ReadOnly))
        return false;
    for (const QByteArray &line : status.readAll().split('\n'))
        if (line.startsWith("SigCgt:"))
            return (line.mid(7).trimmed().toULongLong(nullptr, 16) >> (signalNumber - 1)) & 1;
    return false;
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

// Waits until `pid` and its workers together spent `moreMs` of CPU time past `baselineMs` (a
// treeCpuMs reading from before): a request that computes (/fib) is running. Polling this is the
// one condition that works in single mode too, where the event loop that would answer a probe is
// the one computing.
inline bool waitForCpu(qint64 pid, qint64 baselineMs, qint64 moreMs, int timeoutMs)
{
    return waitUntil([&] { return treeCpuMs(pid) >= baselineMs + moreMs; }, timeoutMs, 5);
}

} // namespace taxicore::test
