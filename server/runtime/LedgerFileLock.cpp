#include "runtime/LedgerFileLock.h"

#include "runtime/FlockHolder.h"

#include <QFile>

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

} // namespace

std::unique_ptr<LedgerFileLock> LedgerFileLock::acquire(const QString &ledgerFile, QString &error)
{
    // Created if missing (SQLite takes an empty file as a new database): a first start on two
    // linked paths must not race past the lock either. Close-on-exec: workers must not keep it.
    const QByteArray path = QFile::encodeName(ledgerFile);
    const int fd = ::open(path.constData(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        error = QStringLiteral("cannot open the ledger %1: %2").arg(ledgerFile, systemError());
        return nullptr;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        error = QStringLiteral("cannot read the ledger %1: %2").arg(ledgerFile, systemError());
        ::close(fd);
        return nullptr;
    }
    if (st.st_nlink > 1) {
        error = QStringLiteral("the ledger %1 has %2 names (hard links): each name would keep its own -wal and "
                               "-shm files and corrupt it; keep one name (remove the other links) and restart")
                    .arg(ledgerFile)
                    .arg(quint64(st.st_nlink));
        ::close(fd);
        return nullptr;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        const bool held = errno == EWOULDBLOCK;
        const QString why = systemError();
        const QString pid = held ? flockHolderPid(fd) : QString();
        ::close(fd);
        error = held ? QStringLiteral("the ledger %1 is in use by another TaxiCore server (pid %2), through another "
                                      "data directory (a link to the same file?); stop it or give this server "
                                      "a ledger of its own")
                           .arg(ledgerFile, pid.isEmpty() ? QStringLiteral("unknown") : pid)
                     : QStringLiteral("cannot lock the ledger %1: %2").arg(ledgerFile, why);
        return nullptr;
    }
    return std::unique_ptr<LedgerFileLock>(new LedgerFileLock(fd));
}

LedgerFileLock::~LedgerFileLock()
{
    ::close(m_fd);
}

} // namespace taxicore
