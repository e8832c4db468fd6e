#pragma once

#include <QString>
#include <sys/types.h>

namespace taxicore {

// Which file the ledger opened, so the writer notices when the path no longer leads to it: the
// data directory deleted (rm -rf, a tmp cleaner) or the file replaced under a running server.
// SQLite writes on to the open, unlinked file in WAL mode without a word; every commit would be
// acknowledged and lost at exit, and a second server could take the directory meanwhile.
// The same for its write-ahead log (`path`-wal), which holds every commit since the last
// checkpoint: deleted, SQLite appends to the unlinked file, and a crash loses what it held.
class LedgerFileIdentity {
public:
    // Remembers the file `path` names now; an error if it cannot be read.
    QString record(const QString &path);
    // Remembers the WAL `path`-wal names now (once the connection made it: after its first
    // transaction); without one, the WAL is not watched.
    void recordWal();
    // Empty while `path` (and its WAL) still name the recorded files; otherwise why not, as a
    // ledger error.
    QString check() const;
    // The database file is there but its WAL was removed or replaced: what the open, unlinked WAL
    // holds must be checkpointed into the file before a crash loses it.
    bool walLost() const;

private:
    struct Identity {
        dev_t device = 0;
        ino_t inode = 0;
        bool known = false;
    };
    // Why `path` no longer names `identity`: "removed", "replaced", an error; empty when it does.
    static QString whatBecameOf(const QString &path, const Identity &identity);

    QString m_path;
    Identity m_file;
    Identity m_wal;
};

} // namespace taxicore
