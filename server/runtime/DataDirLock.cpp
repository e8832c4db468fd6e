#include "runtime/DataDirLock.h"

#include "runtime/FlockHolder.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace taxicore {

namespace {

QString systemError()
{
    return QString::fromLocal8Bit(std::strerror(errno));
}

// The pid the owner wrote into the lock file ("" when unreadable: it may be between open and write).
QString ownerPid(int fd)
{
    char buffer[32] = {};
    const ssize_t n = ::pread(fd, buffer, sizeof buffer - 1, 0);
    return n > 0 ? QString::fromLatin1(buffer, int(n)).trimmed() : QString();
}

QString inUse(const QString &dataDir, const QString &pid)
{
    return QStringLiteral("the data directory %1 is in use by another TaxiCore server (pid %2); "
                          "stop it or pass another --data-dir")
        .arg(dataDir, pid.isEmpty() ? QStringLiteral("unknown") : pid);
}

// The message when `dataDir`, or the nearest part of its path that exists, is not a directory (an
// operator's file: mkpath would only say it failed). Empty when nothing is in the way.
QString notADirectory(const QString &dataDir)
{
    const QString path = QDir::cleanPath(QDir(dataDir).absolutePath());
    for (QFileInfo part(path);; part.setFile(part.absolutePath())) {
        if (part.exists() && part.isDir())
            return {};
        if (part.exists()) {
            const QString kind = part.isFile() ? QStringLiteral("a file") : QStringLiteral("a special file");
            if (part.filePath() == path)
                return QStringLiteral("the data directory %1 is %2, not a directory").arg(dataDir, kind);
            return QStringLiteral("cannot create the data directory %1: %2 is %3, not a directory")
                .arg(dataDir, part.filePath(), kind);
        }
        if (part.isRoot() || part.filePath() == part.absolutePath())
            return {};
    }
}

} // namespace

std::unique_ptr<DataDirLock> DataDirLock::acquire(const QString &dataDir, QString &error)
{
    if (QString inTheWay = notADirectory(dataDir); !inTheWay.isEmpty()) {
        error = std::move(inTheWay);
        return nullptr;
    }
    if (!QDir().mkpath(dataDir)) {
        error = QStringLiteral("cannot create the data directory %1").arg(dataDir);
        return nullptr;
    }
    // The directory itself first: server.lock looks like a stale pidfile, and a second server
    // that found it deleted would lock a new one and share the ledger. Close-on-exec, as the
    // file's: worker processes and taxicore-bench must not keep the lock after we exit.
    const QByteArray dirPath = QFile::encodeName(dataDir);
    const int dirFd = ::open(dirPath.constData(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirFd < 0) {
        error = QStringLiteral("cannot open the data directory %1: %2").arg(dataDir, systemError());
        return nullptr;
    }
    if (::flock(dirFd, LOCK_EX | LOCK_NB) != 0) {
        const bool held = errno == EWOULDBLOCK;
        const QString why = systemError();
        QString pid;
        if (held) {
            pid = flockHolderPid(dirFd);
            if (pid.isEmpty()) { // /proc unreadable: the pid the owner wrote, if its file is still there
                const QByteArray file = QFile::encodeName(QDir(dataDir).filePath(QStringLiteral("server.lock")));
                if (const int fd = ::open(file.constData(), O_RDONLY | O_CLOEXEC); fd >= 0) {
                    pid = ownerPid(fd);
                    ::close(fd);
                }
            }
        }
        ::close(dirFd);
        error = held ? inUse(dataDir, pid) : QStringLiteral("cannot lock the data directory %1: %2").arg(dataDir, why);
        return nullptr;
    }
    const QByteArray path = QFile::encodeName(QDir(dataDir).filePath(QStringLiteral("server.lock")));
    const int fd = ::open(path.constData(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        error = QStringLiteral("cannot open %1: %2").arg(QFile::decodeName(path), systemError());
        ::close(dirFd);
        return nullptr;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const bool held = errno == EWOULDBLOCK;
        const QString why = systemError();
        const QString pid = held ? ownerPid(fd) : QString();
        ::close(fd);
        ::close(dirFd);
        if (!held)
            error = QStringLiteral("cannot lock %1: %2").arg(QFile::decodeName(path), why);
        else
            error = inUse(dataDir, pid);
        return nullptr;
    }
    const QByteArray pid = QByteArray::number(qint64(::getpid())) + '\n';
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.constData(), size_t(pid.size()), 0) != pid.size()) {
        error = QStringLiteral("cannot write %1: %2").arg(QFile::decodeName(path), systemError());
        ::close(fd);
        ::close(dirFd);
        return nullptr;
    }
    return std::unique_ptr<DataDirLock>(new DataDirLock(fd, dirFd));
}

DataDirLock::~DataDirLock()
{
    // The file stays: removing it would race with a server that just opened it to lock it.
    ::close(m_fd);
    ::close(m_dirFd);
}

} // namespace taxicore
