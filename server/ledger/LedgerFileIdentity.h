#pragma once

#include <QByteArray>
#include <QString>
#include <sys/types.h>

namespace taxicore {

// Which files the ledger opened, so the writer notices when the path no longer leads to them: the
// data directory deleted (rm -rf, a tmp cleaner) or a file replaced under a running server.
// SQLite writes on to the open, unlinked file in WAL mode without a word; every commit would be
// acknowledged and lost at exit, and a second server could take the directory meanwhile.
// The same for its write-ahead log (`path`-wal), which holds every commit since the last
// checkpoint: deleted, SQLite appends to the unlinked file, and a crash loses what it held.
// And for its WAL index (`path`-shm), which holds the WAL's frame index and the locks every
// process takes: deleted, a process opening the ledger afterwards makes a fresh one and writes
// into the same WAL as the others without excluding them (a corrupt ledger).
// Besides which files, how long: SQLite never shrinks the database file here (no VACUUM, no
// auto_vacuum), and the WAL is never shorter than the frames its index counts; a file truncated
// in place (truncate -s 0) is seen before the next transaction.
class LedgerFileIdentity {
public:
    LedgerFileIdentity() = default;
    ~LedgerFileIdentity();
    LedgerFileIdentity(const LedgerFileIdentity &) = delete;
    LedgerFileIdentity &operator=(const LedgerFileIdentity &) = delete;

    // Remembers the file `path` names now; an error if it cannot be read.
    QString record(const QString &path);
    // Remembers the WAL (`path`-wal) and its index (`path`-shm) as they are now (once the
    // connection made them: after its first transaction), and the file's size; without them,
    // they are not watched.
    void recordWal();
    // Empty while `path` (and its WAL and WAL index) still name the recorded files; otherwise why
    // not, as a ledger error.
    QString check() const;
    // Empty while the database file is no shorter than it was and the WAL holds every frame its
    // index counts; otherwise why not, as a ledger error. Meant inside a write transaction (no
    // other process checkpoints or commits meanwhile). One stat per file and a 48-byte read.
    QString checkSizes();
    // The database file is there but its WAL was removed or replaced: what the open, unlinked WAL
    // holds must be checkpointed into the file before a crash loses it.
    bool walLost() const;

    // The three files as "device:inode" triples ("" until recordWal() found all three): handed to
    // worker processes, which open the ledger only if `path` still names exactly these files.
    QString fingerprint() const;
    // Empty when `path`, its -wal and -shm are the files `fingerprint` names; otherwise why not.
    static QString verify(const QString &path, const QString &fingerprint);

private:
    struct Identity {
        dev_t device = 0;
        ino_t inode = 0;
        bool known = false;
    };
    // Why `path` no longer names `identity`: "removed", "replaced", an error; empty when it does.
    static QString whatBecameOf(const QByteArray &path, const Identity &identity);

    QString m_path;
    // The three paths as the system calls take them, encoded once (each check stats them).
    QByteArray m_fileName;
    QByteArray m_walName;
    QByteArray m_shmName;
    Identity m_file;
    Identity m_wal;
    Identity m_shm;
    qint64 m_fileSize = 0; // the largest size seen: the file never shrinks by SQLite's hand here
    // Read-only, to read the WAL index header; never closed while a connection may hold locks on
    // the file (closing any descriptor of a file drops every POSIX lock the process has on it):
    // kept open until this object goes, after the writer's connection closed.
    int m_shmFd = -1;
};

} // namespace taxicore
