#include "ledger/PostgresCommitOutcome.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <libpq-fe.h>

namespace taxicore {

namespace {

// The old session, if it is still there: ours (same role), not this connection.
constexpr char kLingering[] =
    "FROM pg_stat_activity WHERE pid = $1 AND pid <> pg_backend_pid() AND usename = current_user";
// How long PostgreSQL waits for the ended session's process to exit (pg_terminate_backend's
// timeout, PostgreSQL 14 and newer); within the statement timeout.
constexpr int kEndWaitMs = 2000;

bool readRefusals(const QByteArray &json, std::vector<QString> &verdicts)
{
    const QJsonDocument document = QJsonDocument::fromJson(json);
    if (!document.isArray())
        return false;
    for (const QJsonValue &entry : document.array()) {
        const QJsonArray pair = entry.toArray();
        const qint64 at = pair.at(0).toInteger();
        if (at >= 1 && quint64(at) <= verdicts.size())
            verdicts[std::size_t(at - 1)] = pair.at(1).toString();
    }
    return true;
}

} // namespace

QByteArray PostgresCommitOutcome::markedBatchSql()
{
    return "WITH refused AS MATERIALIZED (SELECT record_at, refusal FROM taxicore_apply_batch($1::json)),"
           " mark AS (INSERT INTO taxicore_batch_outcomes (writer, batch, refusals)"
           "  SELECT $2::text, $3::bigint, coalesce(json_agg(json_build_array(record_at, refusal)), '[]'::json)"
           "  FROM refused)"
           " SELECT record_at, refusal FROM refused";
}

QByteArray PostgresCommitOutcome::forgetSql()
{
    return "DELETE FROM taxicore_batch_outcomes WHERE writer = $1::text AND batch < $2::bigint";
}

PgParams PostgresCommitOutcome::forgetParams(const PgBatchMark &before)
{
    PgParams params;
    params.addUtf8(before.writer).add(before.batch);
    return params;
}

PostgresCommitOutcome::Known PostgresCommitOutcome::settle(PostgresConnection &connection, int lostBackendPid,
                                                           const PgBatchMark &mark, std::vector<QString> &verdicts,
                                                           QString *error)
{
    // While the old session lives its transaction may still commit: end it, and only once it is
    // gone is the mark's absence an answer. PostgreSQL finishes a commit it has begun before the
    // session ends (interrupts wait out the commit's critical section), so ending it never undoes
    // a commit; it only stops one that had not begun.
    PgParams pid;
    pid.add(lostBackendPid);
    if (!connection.exec(QByteArray("SELECT pg_terminate_backend(pid, ") + QByteArray::number(kEndWaitMs) + ") "
                             + kLingering,
                         pid, error))
        return Known::Unknown;
    const PgResult lingering = connection.exec(QByteArray("SELECT count(*) ") + kLingering, pid, error);
    if (!lingering)
        return Known::Unknown;
    if (QByteArray(PQgetvalue(lingering.get(), 0, 0)).toInt() != 0) {
        *error = QStringLiteral("ledger PostgreSQL %1: the session that sent the commit (backend %2) has not ended yet")
                     .arg(connection.where())
                     .arg(lostBackendPid);
        return Known::Unknown;
    }
    PgParams key;
    key.addUtf8(mark.writer).add(mark.batch);
    const PgResult found = connection.exec(
        "SELECT refusals FROM taxicore_batch_outcomes WHERE writer = $1::text AND batch = $2::bigint", key, error);
    if (!found)
        return Known::Unknown;
    if (PQntuples(found.get()) == 0)
        return Known::NotCommitted;
    if (!readRefusals(QByteArray(PQgetvalue(found.get(), 0, 0)), verdicts)) {
        *error = QStringLiteral("ledger PostgreSQL %1: batch %2's outcome does not parse")
                     .arg(connection.where())
                     .arg(mark.batch);
        return Known::Unknown;
    }
    return Known::Committed;
}

} // namespace taxicore
