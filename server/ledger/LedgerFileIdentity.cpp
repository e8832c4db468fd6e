#include "ledger/LedgerFileIdentity.h"

#include <QFile>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace taxicore {

namespace {
QString walPathOf(const QString &path)
{
    return path + QStringLiteral("-wal");
}
} // namespace

QString LedgerFileIdentity::record(const QString &path)
{
    m_path = path;
    m_wal = {};
    struct stat info {};
    if (::stat(QFile::encodeName(path).constData(), &info) != 0)
        return QStringLiteral("ledger %1: cannot read the file's identity: %2")
            .arg(path, QString::fromLocal8Bit(strerror(errno)));
    m_file = {info.st_dev, info.st_ino, true};
    return {};
}

void LedgerFileIdentity::recordWal()
{
    struct stat info {};
    if (::stat(QFile::encodeName(walPathOf(m_path)).constData(), &info) == 0)
        m_wal = {info.st_dev, info.st_ino, true};
}

QString LedgerFileIdentity::whatBecameOf(const QString &path, const Identity &identity)
{
    struct stat info {};
    if (::stat(QFile::encodeName(path).constData(), &info) != 0) {
        const int error = errno;
        if (error != ENOENT && error != ENOTDIR) // not known gone: a permission changed, an I/O error
            return QStringLiteral("cannot be reached: %1").arg(QString::fromLocal8Bit(strerror(error)));
        return QStringLiteral("was removed");
    }
    if (info.st_dev != identity.device || info.st_ino != identity.inode)
        return QStringLiteral("was replaced");
    return {};
}

QString LedgerFileIdentity::check() const
{
    if (const QString what = whatBecameOf(m_path, m_file); !what.isEmpty()) {
        if (what.startsWith(QLatin1StringView("cannot")))
            return QStringLiteral("ledger %1: the file %2").arg(m_path, what);
        return QStringLiteral("ledger %1: the file %2 while the server ran (its data directory deleted?); "
                              "nothing more can be recorded in it: restart the server")
            .arg(m_path, what);
    }
    if (!m_wal.known)
        return {};
    if (const QString what = whatBecameOf(walPathOf(m_path), m_wal); !what.isEmpty())
        return QStringLiteral("ledger %1: its WAL file (-wal) %2 while the server ran; what it held is kept in the "
                              "database file, nothing more can be recorded: restart the server")
            .arg(m_path, what);
    return {};
}

bool LedgerFileIdentity::walLost() const
{
    return m_wal.known && whatBecameOf(m_path, m_file).isEmpty() && !whatBecameOf(walPathOf(m_path), m_wal).isEmpty();
}

} // namespace taxicore
