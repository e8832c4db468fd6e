#pragma once

#include "ledger/LedgerOptions.h"
#include "ledger/LedgerQueries.h"
#include "ledger/LedgerRecords.h"
#include "ledger/LedgerStats.h"

#include <functional>
#include <memory>

namespace taxicore {

// The durable ledger of one process: the seam between the service and where bookings are kept.
// The embedded default is SqliteLedger (<dataDir>/ledger.sqlite, group commit on a writer thread;
// every process opens its own on the same file). A database backend implements the same calls:
// append() is asynchronous and batched, and `done` reports the commit, which is what lets the
// service answer a booking only after it is durable (ack after commit).
//
//   auto opened = Ledger::open(options);        // error names the ledger and the problem
//   opened.ledger->append(BookingRecord{...}, [](bool committed, const QString &error) {
//       // on the ledger's writer thread, after the record's transaction committed
//   });
class Ledger {
public:
    using Done = std::function<void(bool committed, const QString &error)>;
    static constexpr int kDefaultWaitMs = 60000; // appendAndWait gives up after this

    struct Opened {
        std::unique_ptr<Ledger> ledger; // null on error
        QString error;
    };
    // The backend `options.url` names: empty or "sqlite:" is the SQLite file in options.dataDir,
    // created, verified and migrated at open (a corrupt, locked, read-only or unwritable file is
    // an error); postgresql:// or postgres:// is PostgresLedger. Any other URL is an error naming
    // its scheme.
    static Opened open(const LedgerOptions &options);

    virtual ~Ledger() = default;
    Ledger(const Ledger &) = delete;
    Ledger &operator=(const Ledger &) = delete;

    // Thread-safe, never blocks on the disk. `done(committed, error)` runs exactly once, on the
    // writer thread (or at once on the caller's thread if the ledger is closing or more than
    // maxQueuedRecords wait), after the transaction holding the record committed (or failed:
    // nothing of the record is written). Records commit in append order: a committed record's
    // predecessors are committed too. `done` must be quick and must not call appendAndWait (it
    // would wait for itself).
    virtual void append(LedgerRecord record, Done done = {}) = 0;
    // Blocks the caller until the record committed; for tests and tools, not for event loops.
    bool appendAndWait(LedgerRecord record, QString *error = nullptr, int timeoutMs = kDefaultWaitMs);

    // Blocks until everything appended so far is committed (or failed) and its callback ran, at
    // most `timeoutMs`; false on timeout. A server calls it before tearing down what its callbacks
    // use (the HTTP stack their replies go to). Not from a callback.
    virtual bool waitUntilIdle(int timeoutMs) = 0;

    virtual const LedgerQueries &reader() const = 0;
    virtual LedgerStats stats() const = 0;
    // Where the ledger is, for messages: the file, or the database.
    virtual QString location() const = 0;
    // The embedded ledger: which files it opened (the database file, its -wal and -shm as
    // device:inode), for worker processes to check theirs against (LedgerOptions::expectedFiles);
    // empty for a backend without files.
    virtual QString fileFingerprint() const { return {}; }
    // How long after a process died a commit it had sent may still land: a database server
    // finishes a COMMIT it received whether or not its client is still there. 0 for a file.
    virtual int commitsOfTheDeadLandWithinMs() const { return 0; }
    const LedgerOptions &options() const { return m_options; }

protected:
    explicit Ledger(const LedgerOptions &options)
        : m_options(options)
    {
    }

private:
    LedgerOptions m_options;
};

} // namespace taxicore
