#include "metrics/ProcessStats.h"

#include <QFile>
#include <QHash>
#include <QMutex>
#include <QElapsedTimer>
#include <unistd.h>

namespace taxicore {

namespace {

struct Sample {
    double cpuSeconds = 0;
    qint64 atMs = 0;
};

bool readCpuSeconds(int pid, double &seconds)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return false;
    const QByteArray line = stat.readAll();
    const qsizetype close = line.lastIndexOf(')'); // the command name may hold spaces
    const QList<QByteArray> fields = line.mid(close + 2).split(' ');
    if (fields.size() < 13)
        return false;
    // Fields 14 and 15 of stat (utime, stime) are 11 and 12 after the name.
    seconds = (fields[11].toDouble() + fields[12].toDouble()) / double(sysconf(_SC_CLK_TCK));
    return true;
}

} // namespace

ProcessStats sampleProcess(int pid)
{
    static QMutex mutex;
    static QHash<int, Sample> previous;
    static QElapsedTimer clock;
    ProcessStats stats;
    if (pid <= 0)
        return stats;
    QFile statm(QStringLiteral("/proc/%1/statm").arg(pid));
    if (statm.open(QIODevice::ReadOnly))
        stats.rssKb = statm.readAll().split(' ').value(1).toLong() * (sysconf(_SC_PAGESIZE) / 1024);
    double cpu = 0;
    if (!readCpuSeconds(pid, cpu))
        return stats;
    QMutexLocker lock(&mutex);
    if (!clock.isValid())
        clock.start();
    const qint64 now = clock.elapsed();
    const auto it = previous.constFind(pid);
    if (it != previous.constEnd() && now > it->atMs)
        stats.cpuPercent = 100.0 * (cpu - it->cpuSeconds) / (double(now - it->atMs) / 1000.0);
    previous.insert(pid, {cpu, now});
    return stats;
}

} // namespace taxicore
