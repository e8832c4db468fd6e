#pragma once

#include <QString>
#include <optional>

namespace taxicore {

// How hard a commit is pushed to disk (`--durability`).
enum class LedgerDurability {
    Normal, // synchronous=NORMAL: a commit survives a process crash (kill -9), not power loss
    Full,   // synchronous=FULL: the WAL is fsync'ed at every commit; survives power loss
};

std::optional<LedgerDurability> parseLedgerDurability(QStringView text);
QString ledgerDurabilityName(LedgerDurability durability);

// Everything a ledger is opened with; each limit has its default here and only here.
struct LedgerOptions {
    QString dataDir; // the file is <dataDir>/ledger.sqlite; the directory is created if missing
    LedgerDurability durability = LedgerDurability::Normal;
    int busyTimeoutMs = 5000;        // SQLite waits this long for another process's write lock
    int lockedGiveUpMs = 30000;      // a batch retries SQLITE_BUSY this long before it fails
    int batchMaxRecords = 1000;      // a transaction commits after this many records ...
    int batchMaxDelayMs = 10;        // ... or after being fed for this long, or when the queue empties
    int maxQueuedRecords = 100000;   // beyond this append() fails at once (overload: answer 503)
    bool verifyOnOpen = true;        // PRAGMA quick_check at open: corruption is an error at start
    bool createIfMissing = true;     // false: the directory and the file must exist (a worker opens
                                     // its primary's file, never a new one where it was deleted)
    int checkpointIntervalMs = 500;  // the writer copies the WAL into the database this often,
                                     // after a batch's callbacks; 0: SQLite's, inside COMMIT
    qint64 walResetBytes = 32 << 20; // beyond this it empties and truncates the WAL instead
    QString url;                     // the backend (Ledger::open): empty or "sqlite:" is the embedded SQLite file;
                                     // postgresql:// or postgres:// a PostgreSQL database (libpq URI)
    int connectTimeoutMs = 2000;     // PostgreSQL: a connection attempt gives up after this
    int statementTimeoutMs = 5000;   // PostgreSQL: no statement or batch waits longer for an answer
    bool claimNodeSlot = false;      // PostgreSQL: hold a node slot, so maxBookingId() is this node's range
    QString expectedFiles;           // SQLite, a worker: its primary's Ledger::fileFingerprint(); the ledger
                                     // opens only if the file, its -wal and -shm are still exactly those
};

inline constexpr auto kLedgerFileName = "ledger.sqlite";

QString ledgerFilePath(const QString &dataDir);
// Whether a --ledger URL names the embedded SQLite file of the data directory (empty or "sqlite:").
bool isSqliteLedgerUrl(const QString &url);

} // namespace taxicore
