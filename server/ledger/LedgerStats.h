#pragma once

#include <QtGlobal>

namespace taxicore {

// Counters of one Ledger's writer since it opened (a copy; read with Ledger::stats()).
struct LedgerStats {
    quint64 appended = 0;     // records handed to append()
    quint64 committed = 0;    // records whose transaction committed
    quint64 failed = 0;       // records reported to their callback as not committed
    quint64 transactions = 0; // committed transactions: appended / transactions is the batch size
    quint64 busyRetries = 0;  // times a transaction waited out SQLITE_BUSY and tried again
    bool failing = false;     // the last transaction failed (a full disk, a lost file or database) until a commit
};

} // namespace taxicore
