#include "ledger/LedgerFileIdentity.h"

#include <QFile>
#include <QStringList>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace taxicore {

namespace {

QString walPathOf(const QString &path)
{
    return path + QStringLiteral("-wal");
}

QString shmPathOf(const QString &path)
{
    return path + QStringLiteral("-shm");
}

QString systemError(int error)
{
    return QString::fromLocal8Bit(strerror(error));
}

} // namespace

LedgerFileIdentity::~LedgerFileIdentity()
{
    if (m_shmFd >= 0)
        ::close(m_shmFd);
}

QString LedgerFileIdentity::record(const QString &path)
{
    m_path = path;
    m_wal = {};
    m_shm = {};
    struct stat info {};
    if (::stat(QFile::encodeName(path).constData(), &info) != 0)
        return QStringLiteral("ledger %1: cannot read the file's identity: %2").arg(path, systemError(errno));
    m_file = {info.st_dev, info.st_ino, true};
    return {};
}

void LedgerFileIdentity::recordWal()
{
    struct stat info {};
    if (::stat(QFile::encodeName(walPathOf(m_path)).constData(), &info) == 0)
        m_wal = {info.st_dev, info.st_ino, true};
    const QByteArray shm = QFile::encodeName(shmPathOf(m_path));
    if (m_shmFd < 0)
        m_shmFd = ::open(shm.constData(), O_RDONLY | O_CLOEXEC);
    if (m_shmFd >= 0 && ::fstat(m_shmFd, &info) == 0)
        m_shm = {info.st_dev, info.st_ino, true};
}

QString LedgerFileIdentity::whatBecameOf(const QString &path, const Identity &identity)
{
    struct stat info {};
    if (::stat(QFile::encodeName(path).constData(), &info) != 0) {
        const int error = errno;
        if (error != ENOENT && error != ENOTDIR) // not known gone: a permission changed, an I/O error
            return QStringLiteral("cannot be reached: %1").arg(systemError(error));
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
    if (m_wal.known) {
        if (const QString what = whatBecameOf(walPathOf(m_path), m_wal); !what.isEmpty())
            return QStringLiteral("ledger %1: its WAL file (-wal) %2 while the server ran; what it held is kept in "
                                  "the database file, nothing more can be recorded: restart the server")
                .arg(m_path, what);
    }
    if (m_shm.known) {
        if (const QString what = whatBecameOf(shmPathOf(m_path), m_shm); !what.isEmpty())
            return QStringLiteral("ledger %1: its WAL index (-shm) %2 while the server ran; a process opening the "
                                  "ledger now would write without excluding the others, so nothing more is "
                                  "recorded: restart the server (what was committed is kept)")
                .arg(m_path, what);
    }
    return {};
}

bool LedgerFileIdentity::walLost() const
{
    return m_wal.known && whatBecameOf(m_path, m_file).isEmpty() && !whatBecameOf(walPathOf(m_path), m_wal).isEmpty();
}

QString LedgerFileIdentity::fingerprint() const
{
    if (!m_file.known || !m_wal.known || !m_shm.known)
        return {};
    QStringList parts;
    for (const Identity *identity : {&m_file, &m_wal, &m_shm})
        parts << QStringLiteral("%1:%2").arg(quint64(identity->device)).arg(quint64(identity->inode));
    return parts.join(QLatin1Char(','));
}

QString LedgerFileIdentity::verify(const QString &path, const QString &fingerprint)
{
    const QStringList parts = fingerprint.split(QLatin1Char(','));
    const QString paths[] = {path, walPathOf(path), shmPathOf(path)};
    const char *names[] = {"the file", "its WAL file (-wal)", "its WAL index (-shm)"};
    for (int i = 0; i < 3; ++i) {
        const QStringList pair = i < parts.size() ? parts[i].split(QLatin1Char(':')) : QStringList();
        Identity expected;
        bool deviceOk = false;
        bool inodeOk = false;
        if (pair.size() == 2) {
            expected.device = dev_t(pair[0].toULongLong(&deviceOk));
            expected.inode = ino_t(pair[1].toULongLong(&inodeOk));
        }
        if (!deviceOk || !inodeOk)
            return QStringLiteral("ledger %1: the primary's file identity \"%2\" cannot be read")
                .arg(path, fingerprint);
        if (const QString what = whatBecameOf(paths[i], expected); !what.isEmpty())
            return QStringLiteral("ledger %1: %2 is not the one its primary opened (it %3: the data directory or the "
                                  "file deleted, or another server's there now); not opened here: restart the server")
                .arg(path, QLatin1StringView(names[i]), what);
    }
    return {};
}

} // namespace taxicore
