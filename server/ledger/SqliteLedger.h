#pragma once

#include "ledger/Ledger.h"
#include "ledger/LedgerBatchWriter.h"
#include "ledger/LedgerReader.h"

namespace taxicore {

// The embedded default ledger: <dataDir>/ledger.sqlite in WAL mode, written by a group-commit
// thread (LedgerBatchWriter), read through short-lived connections (LedgerReader).
class SqliteLedger final : public Ledger {
public:
    // Ledger::open() for the SQLite backend: prepares the directory and starts the writer.
    static Opened open(const LedgerOptions &options);
    ~SqliteLedger() override; // commits everything already appended, runs its callbacks, then closes

    void append(LedgerRecord record, Done done = {}) override;
    bool waitUntilIdle(int timeoutMs) override { return m_writer.waitUntilIdle(timeoutMs); }
    const LedgerQueries &reader() const override { return m_reader; }
    LedgerStats stats() const override { return m_writer.stats(); }
    QString location() const override { return m_file; }
    QString fileFingerprint() const override { return m_writer.fileFingerprint(); }

private:
    explicit SqliteLedger(const LedgerOptions &options);

    QString m_file;
    LedgerReader m_reader;
    LedgerBatchWriter m_writer;
};

} // namespace taxicore
