#include "ledger/PostgresCommitOutcome.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QThread>
#include <libpq-fe.h>

namespace taxicore {

namespace {

// The old session, if it is still there: ours (same role, and started when it was: after a restart
// of PostgreSQL its process id may be another session's), not this connection.
constexpr char kLingering[] = "FROM pg_stat_activity WHERE pid = $1 AND backend_start::text = $2"
                              " AND pid <> pg_backend_pid() AND usename = current_user";
// How long the ended session's process is given to exit, looked at every kEndPollMs (the
// one-argument pg_terminate_backend, so any PostgreSQL will do; 14's timeout argument would not).
constexpr int kEndWaitMs = 2000;
constexpr int kEndPollMs = 50;

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

// Ends `session` if it lingers and waits until it is gone: true once it is, false (and *error)
// when it cannot be asked or outlives kEndWaitMs.
bool endSession(PostgresConnection &connection, const PgSession &session, QString *error)
{
    PgParams which;
    which.add(session.pid).addUtf8(session.startedAt);
    if (!connection.exec(QByteArray("SELECT pg_terminate_backend(pid) ") + kLingering, which, error))
        return false;
    QElapsedTimer waited;
    waited.start();
    for (;;) {
        const PgResult lingering = connection.exec(QByteArray("SELECT count(*) ") + kLingering, which, error);
        if (!lingering)
            return false;
        if (QByteArray(PQgetvalue(lingering.get(), 0, 0)).toInt() == 0)
            return true;
        if (waited.elapsed() >= kEndWaitMs) {
            *error = QStringLiteral("ledger PostgreSQL %1: the session that sent the commit (backend %2) has not "
                                    "ended yet")
                         .arg(connection.where())
                         .arg(session.pid);
            return false;
        }
        QThread::msleep(kEndPollMs);
    }
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
    // And anyone's a day old: a writer that died (each process start is a new writer) leaves its
    // last few, which no one else would delete. A batch is settled long before.
    return "DELETE FROM taxicore_batch_outcomes WHERE (writer = $1::text AND batch < $2::bigint)"
           " OR written_at < now() - interval '1 day'";
}

PgParams PostgresCommitOutcome::forgetParams(const PgBatchMark &before)
{
    PgParams params;
    params.addUtf8(before.writer).add(before.batch);
    return params;
}

PgSession PostgresCommitOutcome::sessionOf(PostgresConnection &connection, QString *error)
{
    const PgResult found = connection.exec(
        "SELECT pg_backend_pid(), backend_start::text FROM pg_stat_activity WHERE pid = pg_backend_pid()", PgParams(),
        error);
    if (!found || PQntuples(found.get()) != 1)
        return {};
    return {QByteArray(PQgetvalue(found.get(), 0, 0)).toInt(), QByteArray(PQgetvalue(found.get(), 0, 1))};
}

PostgresCommitOutcome::Known PostgresCommitOutcome::settle(PostgresConnection &connection, const PgSession &lostSession,
                                                           const PgBatchMark &mark, std::vector<QString> &verdicts,
                                                           QString *error)
{
    // While the old session lives its transaction may still commit: end it, and only once it is
    // gone is the mark's absence an answer. PostgreSQL finishes a commit it has begun before the
    // session ends (interrupts wait out the commit's critical section), so ending it never undoes
    // a commit; it only stops one that had not begun.
    if (!endSession(connection, lostSession, error))
        return Known::Unknown;
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
