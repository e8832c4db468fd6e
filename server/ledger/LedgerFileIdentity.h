#pragma once

#include <QString>
#include <sys/types.h>

namespace taxicore {

// Which file the ledger opened, so the writer notices when the path no longer leads to it: the
// data directory deleted (rm -rf, a tmp cleaner) or the file replaced under a running server.
// SQLite writes on to the open, unlinked file in WAL mode without a word; every commit would be
// acknowledged and lost at exit, and a second server could take the directory meanwhile.
class LedgerFileIdentity {
public:
    // Remembers the file `path` names now; an error if it cannot be read.
    QString record(const QString &path);
    // Empty while `path` still names the recorded file; otherwise why not, as a ledger error.
    QString check() const;

private:
    QString m_path;
    dev_t m_device = 0;
    ino_t m_inode = 0;
};

} // namespace taxicore
