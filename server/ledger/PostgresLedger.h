#pragma once

#include "ledger/Ledger.h"
#include "ledger/PostgresBatchWriter.h"
#include "ledger/PostgresNodeSlot.h"
#include "ledger/PostgresQueries.h"

#include <memory>

namespace taxicore {

// The cluster's ledger: PostgreSQL at a libpq URL (postgresql:// or postgres://), shared by every
// node. Group commit on a writer thread (PostgresBatchWriter); the booking compare-and-swap on
// `cars` and the check of every move run inside the commit, so two nodes never both book one car
// or both end one booking. With claimNodeSlot, a node slot makes booking ids cluster-unique.
class PostgresLedger final : public Ledger {
public:
    static bool handles(const QString &url);
    // Connects (within connectTimeoutMs), migrates the schema, takes a node slot when asked.
    // The error names host:port/db, never the password.
    static Opened open(const LedgerOptions &options);
    ~PostgresLedger() override; // commits everything already appended, runs its callbacks, then closes

    void append(LedgerRecord record, Done done = {}) override;
    bool waitUntilIdle(int timeoutMs) override { return m_writer.waitUntilIdle(timeoutMs); }
    const LedgerQueries &reader() const override { return m_queries; }
    LedgerStats stats() const override { return m_writer.stats(); }
    QString location() const override { return m_location; }
    // A COMMIT the server received before its client died still runs, within the statement timeout.
    int commitsOfTheDeadLandWithinMs() const override { return options().statementTimeoutMs + 1000; }
    // The node slot held (1..1023), or 0 without claimNodeSlot.
    int nodeSlot() const { return m_slot ? m_slot->slot() : 0; }

private:
    explicit PostgresLedger(const LedgerOptions &options);

    QString m_location;
    std::unique_ptr<PostgresNodeSlot> m_slot;
    PostgresQueries m_queries;
    PostgresBatchWriter m_writer;
};

} // namespace taxicore
