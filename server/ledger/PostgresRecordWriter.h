#pragma once

#include "ledger/LedgerRecords.h"
#include "ledger/PostgresCommitOutcome.h"
#include "ledger/PostgresConnection.h"

#include <vector>

namespace taxicore {

// A prepared statement and its parameters, ready to be pipelined.
struct PgStatement {
    QByteArray name;
    PgParams params;
};

// Turns the records of one group commit into one statement: taxicore_apply_batch (PostgresSchema
// version 4) with the records as a JSON array. The booking compare-and-swap and every move's check
// happen there, set-based; it answers the refused records only ("car_taken: ...",
// "booking_moved: ..."), of which nothing was written. The same statement writes the batch's mark
// with those refusals (PostgresCommitOutcome), so a batch whose answer was lost can be settled.
class PostgresRecordWriter {
public:
    // On a fresh connection, before the first statement.
    static QString prepare(PostgresConnection &connection);
    // A record with bad data (id 0, unknown state, event without kind): the error; it is not sent.
    static QString check(const LedgerRecord &record);
    // The wave of each record (1, 2, ...; 0 for an event): later than every earlier record of the
    // same booking or car, so the records of one wave touch distinct rows. A reassign and a move
    // or trip without a car (the car it frees is not known here) open a wave of their own.
    static std::vector<int> waves(const std::vector<const LedgerRecord *> &records);
    // The statement writing `records` (each checked) in one go, and `mark`; record k is position k + 1.
    static PgStatement batchStatement(const std::vector<const LedgerRecord *> &records, const PgBatchMark &mark);
    // Deletes this writer's marks of the batches before `before` (all settled).
    static PgStatement forgetStatement(const PgBatchMark &before);
    // The refusals of a batch statement's result into verdicts[position - 1]; false (and *error)
    // when the statement failed.
    static bool readVerdicts(PostgresConnection &connection, const pg_result *result, std::vector<QString> &verdicts,
                             QString *error);
};

} // namespace taxicore
