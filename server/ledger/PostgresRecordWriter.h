#pragma once

#include "ledger/LedgerRecords.h"
#include "ledger/PostgresConnection.h"

#include <vector>

namespace taxicore {

// A record as one prepared statement of PostgresSchema's functions, ready to be pipelined.
struct PgStatement {
    QByteArray name;
    PgParams params;
};

// Turns records into statements; the booking compare-and-swap and every move's check happen in
// the functions they call (taxicore_book, taxicore_move, taxicore_trip), which answer '' or the
// refusal ("car_taken: ...", "booking_moved: ...") and then wrote nothing of the record.
class PostgresRecordWriter {
public:
    // On a fresh connection, before the first statement.
    static QString prepare(PostgresConnection &connection);
    // A record with bad data (id 0, unknown state, event without kind): the error, nothing to send.
    static QString statementFor(const LedgerRecord &record, PgStatement *statement);
    // The first statement of a group commit: locks every car and booking row the records will
    // write, in one global order (taxicore_lock_batch), so concurrent commits cannot deadlock.
    static PgStatement lockStatementFor(const std::vector<const LedgerRecord *> &records);
    // The verdict of a statement's result: empty (written), the refusal, or the statement's error.
    static QString verdict(PostgresConnection &connection, const pg_result *result);
};

} // namespace taxicore
