#pragma once

#include "ledger/PostgresConnection.h"

#include <QByteArray>
#include <QString>
#include <vector>

namespace taxicore {

// Which writer sent a batch and its number there: written by the batch's own transaction (table
// taxicore_batch_outcomes, schema version 10, with the batch's refusals), so it is in the database
// if and only if the batch committed.
struct PgBatchMark {
    QByteArray writer; // random per writer (per process start): two writers never share one
    qint64 batch = 0;  // 1, 2, ... in the order this writer sent them
};

// A session of the database, as another session can tell it from a later one with its process id.
struct PgSession {
    int pid = 0;
    QByteArray startedAt; // pg_stat_activity.backend_start, as text
};

// What became of a batch whose answer never came. A COMMIT that was sent may have been written
// although its answer was lost (PostgreSQL stalled past the statement timeout, the connection cut,
// the server restarted): answering "failed" then lies — the rider hears 503 of a booking the ledger
// holds, and the node frees a car every other node sees taken. Instead the writer asks the
// database on a new connection, once the old session is certainly over: it ends it
// (pg_terminate_backend) and waits until it has left pg_stat_activity, so its transaction is
// committed or rolled back for good, then reads the batch's mark.
class PostgresCommitOutcome {
public:
    enum class Known {
        Committed,    // the mark is there: *refusals holds the records the batch refused
        NotCommitted, // the old session is over and the mark is not there: nothing was written
        Unknown,      // the database could not be asked (unreachable, the old session lingers): *error
    };

    // The batch statement's text: taxicore_apply_batch($1) writing its mark ($2 writer, $3 batch)
    // and its refusals in the same transaction, answering the refusals (record_at, refusal).
    static QByteArray markedBatchSql();
    // Forgets this writer's marks of batches before `before`, which were all settled (the writer
    // sends one batch at a time): pipelined with a later batch, so the table stays small.
    static QByteArray forgetSql();
    static PgParams forgetParams(const PgBatchMark &before);

    // The session of `connection` (pid 0 and *error when it cannot be read).
    static PgSession sessionOf(PostgresConnection &connection, QString *error);
    // On a fresh connection (not `lostSession`, the one the batch went on): Committed with
    // verdicts[position - 1] set for each refused record, NotCommitted, or Unknown.
    static Known settle(PostgresConnection &connection, const PgSession &lostSession, const PgBatchMark &mark,
                        std::vector<QString> &verdicts, QString *error);
};

} // namespace taxicore
