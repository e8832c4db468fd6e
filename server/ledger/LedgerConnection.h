#pragma once

#include "ledger/LedgerOptions.h"

#include <QSqlDatabase>
#include <QString>

class QSqlError;

namespace taxicore {

// One QSQLITE connection to the ledger file, owned by the thread that opened it (Qt SQL's rule),
// removed from Qt's registry when destroyed. Errors come back as messages naming the file.
class LedgerConnection {
public:
    enum class Role { Writer, Reader };

    LedgerConnection();
    ~LedgerConnection();
    LedgerConnection(const LedgerConnection &) = delete;
    LedgerConnection &operator=(const LedgerConnection &) = delete;

    // Writer: busy_timeout, journal_mode=WAL, synchronous per durability. Reader: busy_timeout.
    QString open(const QString &file, const LedgerOptions &options, Role role);
    QSqlDatabase &database() { return m_db; }
    const QString &file() const { return m_file; }

    // Runs one statement; an error message, or empty.
    QString exec(const QString &sql, const QString &doing);
    QString setBusyTimeout(int ms);
    // BEGIN IMMEDIATE (takes the write lock now, so no statement of the transaction can meet
    // SQLITE_BUSY later), retried until `giveUpMs` while another process holds the lock.
    QString beginImmediate(int giveUpMs, quint64 *busyRetries);
    QString commit(int giveUpMs, quint64 *busyRetries);
    void rollback();
    // PRAGMA wal_checkpoint: Passive copies what it can into the database; Truncate also empties
    // the WAL file, which needs every other connection reading the newest snapshot. Neither waits
    // once busy_timeout is 0. `complete`: every frame was copied (and the WAL emptied).
    enum class Checkpoint { Passive, Truncate };
    QString checkpoint(Checkpoint mode, bool *complete = nullptr);
    // PRAGMA quick_check: a damaged file is an error at open, not a surprise later.
    QString quickCheck();

    QString describe(const QSqlError &error, const QString &doing) const;
    static bool isBusy(const QSqlError &error);

private:
    QString execRetrying(const QString &sql, const QString &doing, int giveUpMs, quint64 *busyRetries);
    QString queryOne(const QString &sql, const QString &doing, QString *value);

    QString m_name;
    QString m_file;
    QSqlDatabase m_db;
};

} // namespace taxicore
