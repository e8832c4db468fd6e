#pragma once

#include "ledger/LedgerBatchWriter.h"
#include "ledger/LedgerReader.h"

#include <memory>

namespace taxicore {

// The durable ledger of one process: <dataDir>/ledger.sqlite in WAL mode, written by a group-commit
// thread. Every process (primary and each worker) opens its own Ledger on the same file.
//
//   auto opened = Ledger::open(options);        // error names the file and the problem
//   opened.ledger->append(BookingRecord{...}, [](bool committed, const QString &error) {
//       // on the ledger's writer thread, after the record's transaction committed
//   });
class Ledger {
public:
    using Done = LedgerBatchWriter::Done;
    static constexpr int kDefaultWaitMs = 60000; // appendAndWait gives up after this

    struct Opened {
        std::unique_ptr<Ledger> ledger; // null on error
        QString error;
    };
    // Creates the directory and the file if needed, verifies it, migrates the schema, and starts
    // the writer. A corrupt, locked (beyond busyTimeoutMs), read-only or unwritable file is an
    // error.
    static Opened open(const LedgerOptions &options);
    ~Ledger(); // commits everything already appended, runs its callbacks, then closes

    // Thread-safe, never blocks on the disk. `done(committed, error)` runs exactly once, on the
    // writer thread (or at once on the caller's thread if the ledger is closing or more than
    // maxQueuedRecords wait), after the
    // transaction holding the record committed (or failed: nothing of the record is written).
    // Records commit in append order: a committed record's predecessors are committed too.
    // `done` must be quick and must not call appendAndWait (it would wait for itself).
    void append(LedgerRecord record, Done done = {});
    // Blocks the caller until the record committed; for tests and tools, not for event loops.
    bool appendAndWait(LedgerRecord record, QString *error = nullptr,
                       int timeoutMs = kDefaultWaitMs);

    // Blocks until everything appended so far is committed (or failed) and its callback ran, at
    // most `timeoutMs`; false on timeout. A server calls it before tearing down what its callbacks
    // use (the HTTP stack their replies go to). Not from a callback.
    bool waitUntilIdle(int timeoutMs) { return m_writer.waitUntilIdle(timeoutMs); }

    const LedgerReader &reader() const { return m_reader; }
    LedgerStats stats() const { return m_writer.stats(); }
    QString filePath() const { return m_file; }
    const LedgerOptions &options() const { return m_options; }

private:
    explicit Ledger(const LedgerOptions &options);

    LedgerOptions m_options;
    QString m_file;
    LedgerReader m_reader;
    LedgerBatchWriter m_writer;
};

} // namespace taxicore
