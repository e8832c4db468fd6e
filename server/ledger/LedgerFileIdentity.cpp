#include "ledger/LedgerFileIdentity.h"

#include <QFile>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace taxicore {

QString LedgerFileIdentity::record(const QString &path)
{
    m_path = path;
    struct stat info {};
    if (::stat(QFile::encodeName(path).constData(), &info) != 0)
        return QStringLiteral("ledger %1: cannot read the file's identity: %2")
            .arg(path, QString::fromLocal8Bit(strerror(errno)));
    m_device = info.st_dev;
    m_inode = info.st_ino;
    return {};
}

QString LedgerFileIdentity::check() const
{
    struct stat info {};
    QString what;
    if (::stat(QFile::encodeName(m_path).constData(), &info) != 0) {
        const int error = errno;
        if (error != ENOENT && error != ENOTDIR) // not known gone: a permission changed, an I/O error
            return QStringLiteral("ledger %1: the file cannot be reached: %2")
                .arg(m_path, QString::fromLocal8Bit(strerror(error)));
        what = QStringLiteral("removed");
    } else if (info.st_dev != m_device || info.st_ino != m_inode) {
        what = QStringLiteral("replaced");
    } else {
        return {};
    }
    return QStringLiteral("ledger %1: the file was %2 while the server ran (its data directory deleted?); "
                          "nothing more can be recorded in it: restart the server")
        .arg(m_path, what);
}

} // namespace taxicore
