#include "ledger/PostgresBatchWriter.h"

#include "ledger/PostgresNodeSlot.h"
#include "ledger/PostgresRecordWriter.h"
#include "ledger/PostgresSchema.h"

#include <QElapsedTimer>
#include <QRandomGenerator>
#include <iterator>
#include <libpq-fe.h>

namespace taxicore {

namespace {

PostgresConnection::Settings settingsOf(const LedgerOptions &options)
{
    return {options.url, options.connectTimeoutMs, options.statementTimeoutMs};
}

// A statement that failed (its error aborted the transaction), as opposed to a refusal.
bool statementFailed(const PgResult &result)
{
    const ExecStatusType status = result ? PQresultStatus(result.get()) : PGRES_FATAL_ERROR;
    return status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK;
}

} // namespace

PostgresBatchWriter::PostgresBatchWriter(const LedgerOptions &options, PostgresNodeSlot *slot)
    : m_options(options)
    , m_connection(settingsOf(options))
    , m_slot(slot)
    , m_health(QStringLiteral("PostgreSQL ") + m_connection.where())
{
    quint32 random[4];
    QRandomGenerator::system()->fillRange(random);
    m_writerId = QByteArray(reinterpret_cast<const char *>(random), sizeof random).toHex();
}

PostgresBatchWriter::~PostgresBatchWriter()
{
    stop();
}

QString PostgresBatchWriter::start()
{
    std::promise<QString> started;
    std::future<QString> result = started.get_future();
    m_thread = std::thread(&PostgresBatchWriter::run, this, std::move(started));
    QString error = result.get();
    if (!error.isEmpty()) {
        m_thread.join();
        return error;
    }
    std::lock_guard lock(m_mutex);
    m_accepting = true;
    return {};
}

void PostgresBatchWriter::append(LedgerRecord record, Done done)
{
    ++m_appended;
    QString refused;
    {
        std::lock_guard lock(m_mutex);
        if (m_accepting && m_queue.size() < std::size_t(std::max(1, m_options.maxQueuedRecords))) {
            m_queue.push_back(Pending{std::move(record), std::move(done), {}});
            ++m_queuedTotal;
            m_wake.notify_one();
            return;
        }
        refused =
            m_accepting
                ? QStringLiteral("ledger PostgreSQL %1: overloaded, %2 records wait for the database; "
                                 "the record was not written")
                      .arg(m_connection.where())
                      .arg(m_queue.size())
                : QStringLiteral("ledger PostgreSQL %1: closed; the record was not written").arg(m_connection.where());
    }
    ++m_failed;
    if (done)
        done(false, refused);
}

bool PostgresBatchWriter::waitUntilIdle(int timeoutMs)
{
    std::unique_lock lock(m_mutex);
    const quint64 target = m_queuedTotal;
    return m_idle.wait_for(lock, std::chrono::milliseconds(timeoutMs),
                           [this, target] { return m_settledTotal >= target; });
}

LedgerStats PostgresBatchWriter::stats() const
{
    LedgerStats s;
    s.appended = m_appended;
    s.committed = m_committed;
    s.failed = m_failed;
    s.transactions = m_transactions;
    s.failing = m_health.failing();
    return s;
}

void PostgresBatchWriter::stop()
{
    {
        std::lock_guard lock(m_mutex);
        m_accepting = false;
        m_stopping = true;
        m_wake.notify_one();
    }
    if (m_thread.joinable())
        m_thread.join();
}

void PostgresBatchWriter::run(std::promise<QString> started)
{
    QString error = connect();
    started.set_value(error);
    if (!error.isEmpty())
        return;
    for (Work work = waitForWork(); work != Work::Stop; work = waitForWork()) {
        if (work == Work::Probe) {
            probe();
            continue;
        }
        const std::size_t settled = commitBatch();
        {
            std::lock_guard lock(m_mutex);
            m_settledTotal += settled;
        }
        m_idle.notify_all();
    }
    m_connection.close();
}

// Connects, migrates (idempotent, so a database recreated while we were away is usable again),
// prepares the statements; after a reconnect the node slot is taken again.
QString PostgresBatchWriter::connect()
{
    QString error = m_connection.connect();
    if (error.isEmpty())
        error = migratePostgresLedger(m_connection);
    if (error.isEmpty())
        error = PostgresRecordWriter::prepare(m_connection);
    if (error.isEmpty())
        m_session = PostgresCommitOutcome::sessionOf(m_connection, &error);
    if (!error.isEmpty()) {
        m_connection.close();
        return error;
    }
    if (m_slot)
        m_slot->reassert();
    return {};
}

// Stop once stopping and the queue is drained; Probe when failing and nothing came for a while.
PostgresBatchWriter::Work PostgresBatchWriter::waitForWork()
{
    std::unique_lock lock(m_mutex);
    const auto ready = [this] { return !m_queue.empty() || m_stopping; };
    if (m_health.failing()) {
        if (!m_wake.wait_for(lock, std::chrono::milliseconds(kProbeIntervalMs), ready))
            return Work::Probe;
    } else {
        m_wake.wait(lock, ready);
    }
    return m_queue.empty() ? Work::Stop : Work::Commit;
}

// Whether the database works again, asked without a record to commit: reconnect if needed (which
// takes the node slot again) and run one trivial transaction. It takes a transaction id, so its
// commit is written and flushed as a booking's would be: a database that answers but cannot commit
// (read-only, its disk full) fails it. Success ends the outage (its one log line); a failure says
// nothing, the outage's line was printed when it began.
void PostgresBatchWriter::probe()
{
    m_connection.closeIfServerLeft();
    QString error = m_connection.isOpen() ? QString() : connect();
    if (error.isEmpty() && m_connection.inFailedTransaction())
        error = m_connection.run("ROLLBACK", QStringLiteral("rolling back"));
    if (error.isEmpty())
        error = m_connection.run("SELECT txid_current()", QStringLiteral("probing"));
    if (error.isEmpty())
        m_health.committed(m_failed);
}

std::size_t PostgresBatchWriter::commitBatch()
{
    std::vector<Pending> batch;
    QString lost;
    m_connection.closeIfServerLeft();
    if (!m_connection.isOpen())
        lost = connect();
    if (!lost.isEmpty()) {
        batch = takeAllQueued(); // not one batch: the rest would each wait for another connect timeout
        m_health.failed(lost, m_failed);
        for (Pending &pending : batch)
            pending.verdict = lost;
        finish(batch);
        return batch.size();
    }
    takeQueued(batch);
    // Keep taking what arrives while within the limits: the records of one round trip.
    QElapsedTimer fed;
    fed.start();
    while (int(batch.size()) < m_options.batchMaxRecords && fed.elapsed() < m_options.batchMaxDelayMs) {
        if (takeQueued(batch) == 0)
            break;
    }
    if (!commitTogether(batch, 0, batch.size(), &lost) && lost.isEmpty()) {
        if (m_connection.inFailedTransaction())
            m_connection.run("ROLLBACK", QStringLiteral("rolling back"));
        for (Pending &pending : batch)
            pending.verdict.clear();
        commitOneByOne(batch);
    }
    finish(batch);
    return batch.size();
}

bool PostgresBatchWriter::commitTogether(std::vector<Pending> &batch, std::size_t first, std::size_t end, QString *lost)
{
    // Records with bad data are refused here and not sent; the rest go as one statement.
    std::vector<std::size_t> sentAt; // batch index of each record sent
    std::vector<const LedgerRecord *> records;
    for (std::size_t i = first; i < end; ++i) {
        batch[i].verdict = PostgresRecordWriter::check(batch[i].record);
        if (!batch[i].verdict.isEmpty())
            continue;
        sentAt.push_back(i);
        records.push_back(&batch[i].record);
    }
    if (records.empty())
        return true;
    const PgBatchMark mark{m_writerId, ++m_batchesSent};
    const PgSession session = m_session;
    const bool forget = mark.batch % kForgetEvery == 0;
    QString error = m_connection.beginPipeline();
    if (error.isEmpty())
        error = m_connection.queue("BEGIN");
    if (error.isEmpty()) {
        const PgStatement statement = PostgresRecordWriter::batchStatement(records, mark);
        error = m_connection.queuePrepared(statement.name, statement.params);
    }
    if (error.isEmpty() && forget) {
        const PgStatement statement = PostgresRecordWriter::forgetStatement(mark);
        error = m_connection.queuePrepared(statement.name, statement.params);
    }
    if (error.isEmpty())
        error = m_connection.queue("COMMIT");
    std::vector<PgResult> results;
    if (error.isEmpty())
        error = m_connection.finishPipeline(forget ? 4 : 3, results);
    if (!error.isEmpty()) {
        // The answer is lost, not necessarily the commit: what the database holds decides.
        m_health.failed(error, m_failed);
        std::vector<QString> verdicts(records.size());
        if (settleLostAnswer(session, mark, verdicts, &error)) {
            for (std::size_t k = 0; k < sentAt.size(); ++k)
                batch[sentAt[k]].verdict = verdicts[k];
            ++m_transactions;
            m_health.committed(m_failed);
            return true;
        }
        for (std::size_t i = first; i < end; ++i)
            batch[i].verdict = error;
        *lost = error;
        return false;
    }
    std::vector<QString> verdicts(records.size());
    if (!PostgresRecordWriter::readVerdicts(m_connection, results[1].get(), verdicts, &error)) {
        // A failed statement (bad data, a lock timeout, a deadlock): nothing committed. A batch is
        // replayed one record per transaction; a single record fails with the reason.
        for (std::size_t i = first; i < end; ++i)
            batch[i].verdict = error;
        return false;
    }
    if (statementFailed(results.front()) || statementFailed(results.back())) {
        const QString failed = m_connection.describe(results.back().get(), QStringLiteral("committing"));
        for (std::size_t i = first; i < end; ++i)
            batch[i].verdict = failed;
        *lost = failed; // the commit itself failed: no replay, every record is reported failed
        m_health.failed(failed, m_failed);
        return false;
    }
    for (std::size_t k = 0; k < sentAt.size(); ++k)
        batch[sentAt[k]].verdict = verdicts[k];
    ++m_transactions;
    m_health.committed(m_failed);
    return true;
}

// Blocks until the database says whether the batch `mark` committed: true (verdicts set to its
// refusals) or false (nothing written; *error says why it failed). Asked on a new connection every
// kProbeIntervalMs while it cannot be; what is appended meanwhile was not sent and is refused at
// once, as in any outage. Stopping before an answer gives up: *error then says the outcome is
// unknown (the next start reads the ledger, which is the truth either way).
bool PostgresBatchWriter::settleLostAnswer(const PgSession &session, const PgBatchMark &mark,
                                           std::vector<QString> &verdicts, QString *error)
{
    for (;;) {
        m_connection.close();
        QString why = connect();
        if (why.isEmpty()) {
            switch (PostgresCommitOutcome::settle(m_connection, session, mark, verdicts, &why)) {
            case PostgresCommitOutcome::Known::Committed:
                return true;
            case PostgresCommitOutcome::Known::NotCommitted:
                *error = QStringLiteral("%1; the transaction was not committed").arg(*error);
                return false;
            case PostgresCommitOutcome::Known::Unknown:
                break;
            }
        }
        // Worded as an outage, so a rider hears "the database is unavailable" (ledgerFailureReason).
        failQueued(QStringLiteral("PostgreSQL at %1 is unavailable: it has not said yet whether an earlier commit "
                                  "was written (%2); the record was not written")
                       .arg(m_connection.where(), why));
        std::unique_lock lock(m_mutex);
        if (m_wake.wait_for(lock, std::chrono::milliseconds(kProbeIntervalMs), [this] { return m_stopping; })) {
            *error = QStringLiteral("%1; stopped before PostgreSQL could say whether the transaction committed "
                                    "(the ledger holds the truth)")
                         .arg(*error);
            return false;
        }
    }
}

// Refuses everything queued (not sent) with `why`.
void PostgresBatchWriter::failQueued(const QString &why)
{
    std::vector<Pending> refused = takeAllQueued();
    for (Pending &pending : refused)
        pending.verdict = why;
    finish(refused);
    {
        std::lock_guard lock(m_mutex);
        m_settledTotal += refused.size();
    }
    m_idle.notify_all();
}

// The slow path after a failed statement: each record in its own transaction, its own verdict.
void PostgresBatchWriter::commitOneByOne(std::vector<Pending> &batch)
{
    for (std::size_t i = 0; i < batch.size(); ++i) {
        if (!m_connection.isOpen()) {
            if (const QString lost = connect(); !lost.isEmpty()) {
                batch[i].verdict = lost;
                m_health.failed(lost, m_failed);
                continue;
            }
        }
        QString lost; // commitTogether has reported a lost connection or a failed commit
        if (commitTogether(batch, i, i + 1, &lost) || !lost.isEmpty())
            continue;
        // Its statement failed: the record's own transaction failed, as in the SQLite ledger.
        m_health.failed(batch[i].verdict, m_failed);
        if (m_connection.inFailedTransaction())
            m_connection.run("ROLLBACK", QStringLiteral("rolling back"));
    }
}

// Moves queued records into the batch, up to its limit; returns how many.
std::size_t PostgresBatchWriter::takeQueued(std::vector<Pending> &batch)
{
    std::lock_guard lock(m_mutex);
    const std::size_t limit = std::size_t(std::max(1, m_options.batchMaxRecords));
    const std::size_t room = limit - std::min(batch.size(), limit);
    const std::size_t count = std::min(room, m_queue.size());
    for (std::size_t i = 0; i < count; ++i) {
        batch.push_back(std::move(m_queue.front()));
        m_queue.pop_front();
    }
    return count;
}

std::vector<PostgresBatchWriter::Pending> PostgresBatchWriter::takeAllQueued()
{
    std::lock_guard lock(m_mutex);
    std::vector<Pending> all(std::make_move_iterator(m_queue.begin()), std::make_move_iterator(m_queue.end()));
    m_queue.clear();
    return all;
}

void PostgresBatchWriter::finish(std::vector<Pending> &batch)
{
    for (Pending &pending : batch) {
        const bool committed = pending.verdict.isEmpty();
        (committed ? m_committed : m_failed) += 1;
        if (pending.done)
            pending.done(committed, pending.verdict);
    }
}

} // namespace taxicore
