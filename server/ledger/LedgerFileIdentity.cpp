#include "ledger/LedgerFileIdentity.h"

#include <QFile>
#include <QStringList>
#include <algorithm>
#include <cerrno>
#include <cstdint>
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

// SQLite's WAL file: a 32-byte header, then frames of a 24-byte header and one page each.
constexpr qint64 kWalHeaderBytes = 32;
constexpr qint64 kWalFrameHeaderBytes = 24;
// The WAL index (-shm) starts with its header (WalIndexHdr in sqlite3.c, native byte order):
// iVersion u32, unused u32, iChange u32, isInit u8, bigEndCksum u8, szPage u16, mxFrame u32, ...
constexpr int kShmHeaderBytes = 48;
constexpr int kShmIsInitOffset = 12;
constexpr int kShmPageSizeOffset = 14;
constexpr int kShmMaxFrameOffset = 16;

} // namespace

LedgerFileIdentity::~LedgerFileIdentity()
{
    if (m_shmFd >= 0)
        ::close(m_shmFd);
}

QString LedgerFileIdentity::record(const QString &path)
{
    m_path = path;
    m_fileName = QFile::encodeName(path);
    m_walName = QFile::encodeName(walPathOf(path));
    m_shmName = QFile::encodeName(shmPathOf(path));
    m_wal = {};
    m_shm = {};
    struct stat info {};
    if (::stat(m_fileName.constData(), &info) != 0)
        return QStringLiteral("ledger %1: cannot read the file's identity: %2").arg(path, systemError(errno));
    m_file = {info.st_dev, info.st_ino, true};
    m_fileSize = info.st_size;
    return {};
}

void LedgerFileIdentity::recordWal()
{
    struct stat info {};
    if (::stat(m_walName.constData(), &info) == 0)
        m_wal = {info.st_dev, info.st_ino, true};
    if (::stat(m_fileName.constData(), &info) == 0)
        m_fileSize = std::max<qint64>(m_fileSize, info.st_size);
    if (m_shmFd < 0)
        m_shmFd = ::open(m_shmName.constData(), O_RDONLY | O_CLOEXEC);
    if (m_shmFd >= 0 && ::fstat(m_shmFd, &info) == 0)
        m_shm = {info.st_dev, info.st_ino, true};
}

QString LedgerFileIdentity::whatBecameOf(const QByteArray &path, const Identity &identity)
{
    struct stat info {};
    if (::stat(path.constData(), &info) != 0) {
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
    if (const QString what = whatBecameOf(m_fileName, m_file); !what.isEmpty()) {
        if (what.startsWith(QLatin1StringView("cannot")))
            return QStringLiteral("ledger %1: the file %2").arg(m_path, what);
        return QStringLiteral("ledger %1: the file %2 while the server ran (its data directory deleted?); "
                              "nothing more can be recorded in it: restart the server")
            .arg(m_path, what);
    }
    if (m_wal.known) {
        if (const QString what = whatBecameOf(m_walName, m_wal); !what.isEmpty())
            return QStringLiteral("ledger %1: its WAL file (-wal) %2 while the server ran; what it held is kept in "
                                  "the database file, nothing more can be recorded: restart the server")
                .arg(m_path, what);
    }
    if (m_shm.known) {
        if (const QString what = whatBecameOf(m_shmName, m_shm); !what.isEmpty())
            return QStringLiteral("ledger %1: its WAL index (-shm) %2 while the server ran; a process opening the "
                                  "ledger now would write without excluding the others, so nothing more is "
                                  "recorded: restart the server (what was committed is kept)")
                .arg(m_path, what);
    }
    return {};
}

QString LedgerFileIdentity::checkSizes()
{
    struct stat info {};
    if (::stat(m_fileName.constData(), &info) != 0)
        return check(); // gone since: says how
    if (info.st_size < m_fileSize)
        return QStringLiteral("ledger %1: the file shrank from %2 to %3 bytes while the server ran (truncated?); "
                              "what it held is gone and nothing more is recorded in it: stop the server and "
                              "restore the file from a backup (a restart on it starts from what is left, "
                              "possibly an empty ledger)")
            .arg(m_path)
            .arg(m_fileSize)
            .arg(qint64(info.st_size));
    m_fileSize = info.st_size;
    if (m_shmFd < 0 || !m_wal.known)
        return {};
    unsigned char header[kShmHeaderBytes];
    if (::pread(m_shmFd, header, sizeof header, 0) != qint64(sizeof header) || header[kShmIsInitOffset] == 0)
        return {}; // not initialised yet: nothing to hold the WAL to
    uint16_t pageField = 0;
    uint32_t frames = 0;
    std::memcpy(&pageField, header + kShmPageSizeOffset, sizeof pageField);
    std::memcpy(&frames, header + kShmMaxFrameOffset, sizeof frames);
    if (frames == 0)
        return {};
    const qint64 pageSize = pageField == 1 ? 65536 : pageField; // 65536 does not fit: stored as 1
    const qint64 needed = kWalHeaderBytes + qint64(frames) * (pageSize + kWalFrameHeaderBytes);
    if (::stat(m_walName.constData(), &info) != 0)
        return check();
    if (info.st_size < needed)
        return QStringLiteral("ledger %1: its WAL file (-wal) is %2 bytes, shorter than the %3 pages its index "
                              "counts need (%4 bytes: truncated?); the commits they held are lost, nothing more can "
                              "be recorded: restart the server")
            .arg(m_path)
            .arg(qint64(info.st_size))
            .arg(frames)
            .arg(needed);
    return {};
}

bool LedgerFileIdentity::walLost() const
{
    return m_wal.known && whatBecameOf(m_fileName, m_file).isEmpty() && !whatBecameOf(m_walName, m_wal).isEmpty();
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
        if (const QString what = whatBecameOf(QFile::encodeName(paths[i]), expected); !what.isEmpty())
            return QStringLiteral("ledger %1: %2 is not the one its primary opened (it %3: the data directory or the "
                                  "file deleted, or another server's there now); not opened here: restart the server")
                .arg(path, QLatin1StringView(names[i]), what);
    }
    return {};
}

} // namespace taxicore
