#include "ledger/LedgerConnection.h"

#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QSqlError>
#include <QSqlQuery>
#include <QThread>
#include <atomic>

namespace taxicore {

namespace {

// SQLite's primary result codes (sqlite3.h); Qt reports them as QSqlError::nativeErrorCode().
enum SqliteCode {
    kBusy = 5,
    kLocked = 6,
    kReadOnly = 8,
    kIoError = 10,
    kCorrupt = 11,
    kFull = 13,
    kCantOpen = 14,
    kNotADatabase = 26,
};

// Pause between our own retries on SQLITE_BUSY: 0.5–1.5 ms, jittered so waiting processes do not
// retry in lockstep. (SQLite's busy handler sleeps up to 100 ms per round: long p99 tails.)
constexpr int kBusyBackoffMinUs = 500;
constexpr int kBusyBackoffJitterUs = 1000;

int sqliteCode(const QSqlError &error)
{
    return error.nativeErrorCode().toInt() & 0xff;
}

QString problemOf(int code)
{
    switch (code) {
    case kBusy:
    case kLocked:
        return QStringLiteral("the database is locked by another process");
    case kReadOnly:
        return QStringLiteral("the database is read-only (check the permissions of the file and its directory)");
    case kIoError:
        return QStringLiteral("disk I/O error");
    case kCorrupt:
        return QStringLiteral("the database file is corrupt");
    case kFull:
        return QStringLiteral("the disk is full");
    case kCantOpen:
        return QStringLiteral("the file cannot be opened (missing directory or no permission)");
    case kNotADatabase:
        return QStringLiteral("the file is not a SQLite database (corrupt or foreign)");
    default:
        return QStringLiteral("SQLite error %1").arg(code);
    }
}

QString uniqueConnectionName()
{
    static std::atomic<quint64> counter{0};
    return QStringLiteral("taxicore-ledger-%1").arg(counter.fetch_add(1) + 1);
}

} // namespace

LedgerConnection::LedgerConnection() = default;

LedgerConnection::~LedgerConnection()
{
    if (m_name.isEmpty())
        return;
    m_db.close();
    m_db = QSqlDatabase();
    QSqlDatabase::removeDatabase(m_name);
}

QString LedgerConnection::open(const QString &file, const LedgerOptions &options, Role role)
{
    m_file = file;
    m_name = uniqueConnectionName();
    m_db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_name);
    if (!m_db.isValid())
        return QStringLiteral("ledger %1: the QSQLITE driver is not available (install libqt6sql6-sqlite)").arg(file);
    m_db.setDatabaseName(file);
    if (!m_db.open())
        return describe(m_db.lastError(), QStringLiteral("opening"));

    QString error = setBusyTimeout(options.busyTimeoutMs);
    if (!error.isEmpty() || role == Role::Reader)
        return error;

    QString mode;
    error = queryOne(QStringLiteral("PRAGMA journal_mode=WAL"), QStringLiteral("switching to WAL"), &mode);
    if (!error.isEmpty())
        return error;
    if (mode.compare(QLatin1StringView("wal"), Qt::CaseInsensitive) != 0)
        return QStringLiteral("ledger %1: cannot switch to WAL mode (journal_mode stays %2; is the "
                              "directory writable?)")
            .arg(file, mode);
    if (options.checkpointIntervalMs > 0) {
        error = exec(QStringLiteral("PRAGMA wal_autocheckpoint=0"), QStringLiteral("setting wal_autocheckpoint"));
        if (!error.isEmpty())
            return error;
    }
    const bool full = options.durability == LedgerDurability::Full;
    return exec(QStringLiteral("PRAGMA synchronous=%1").arg(full ? "FULL" : "NORMAL"),
                QStringLiteral("setting synchronous"));
}

QString LedgerConnection::exec(const QString &sql, const QString &doing)
{
    QSqlQuery query(m_db);
    if (!query.exec(sql))
        return describe(query.lastError(), doing);
    return {};
}

QString LedgerConnection::setBusyTimeout(int ms)
{
    return exec(QStringLiteral("PRAGMA busy_timeout=%1").arg(ms), QStringLiteral("setting busy_timeout"));
}

QString LedgerConnection::queryOne(const QString &sql, const QString &doing, QString *value)
{
    QSqlQuery query(m_db);
    if (!query.exec(sql))
        return describe(query.lastError(), doing);
    if (query.next())
        *value = query.value(0).toString();
    return {};
}

QString LedgerConnection::execRetrying(const QString &sql, const QString &doing, int giveUpMs, quint64 *busyRetries)
{
    QElapsedTimer waited;
    waited.start();
    for (;;) {
        QSqlQuery query(m_db);
        if (query.exec(sql))
            return {};
        const QSqlError error = query.lastError();
        if (!isBusy(error) || waited.elapsed() >= giveUpMs)
            return describe(error, doing)
                   + (isBusy(error) ? QStringLiteral(" (gave up after %1 ms)").arg(waited.elapsed()) : QString());
        if (busyRetries)
            ++*busyRetries;
        QThread::usleep(kBusyBackoffMinUs + QRandomGenerator::global()->bounded(kBusyBackoffJitterUs));
    }
}

QString LedgerConnection::beginImmediate(int giveUpMs, quint64 *busyRetries)
{
    return execRetrying(QStringLiteral("BEGIN IMMEDIATE"), QStringLiteral("starting a write transaction"), giveUpMs,
                        busyRetries);
}

QString LedgerConnection::commit(int giveUpMs, quint64 *busyRetries)
{
    return execRetrying(QStringLiteral("COMMIT"), QStringLiteral("committing"), giveUpMs, busyRetries);
}

void LedgerConnection::rollback()
{
    QSqlQuery query(m_db);
    query.exec(QStringLiteral("ROLLBACK")); // fails harmlessly when SQLite already rolled back
}

QString LedgerConnection::checkpoint(Checkpoint mode, bool *complete)
{
    QSqlQuery query(m_db);
    const QString sql = mode == Checkpoint::Truncate ? QStringLiteral("PRAGMA wal_checkpoint(TRUNCATE)")
                                                     : QStringLiteral("PRAGMA wal_checkpoint(PASSIVE)");
    if (!query.exec(sql))
        return describe(query.lastError(), QStringLiteral("checkpointing"));
    // One row: busy (1 when another connection kept it from finishing), WAL frames, frames copied.
    const bool done = query.next() && query.value(0).toInt() == 0 && query.value(1).toInt() == query.value(2).toInt();
    if (complete)
        *complete = done;
    return {};
}

QString LedgerConnection::quickCheck()
{
    QString verdict;
    const QString error =
        queryOne(QStringLiteral("PRAGMA quick_check(1)"), QStringLiteral("checking integrity"), &verdict);
    if (!error.isEmpty() || verdict == QLatin1StringView("ok"))
        return error;
    return QStringLiteral("ledger %1: the database file is corrupt (quick_check: %2)").arg(m_file, verdict);
}

QString LedgerConnection::describe(const QSqlError &error, const QString &doing) const
{
    return QStringLiteral("ledger %1: %2 failed: %3 (%4)")
        .arg(m_file, doing, problemOf(sqliteCode(error)), error.text());
}

bool LedgerConnection::isBusy(const QSqlError &error)
{
    const int code = sqliteCode(error);
    return code == kBusy || code == kLocked;
}

} // namespace taxicore
