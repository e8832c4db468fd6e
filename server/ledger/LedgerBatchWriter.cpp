#include "ledger/LedgerBatchWriter.h"

#include "ledger/LedgerConnection.h"
#include "ledger/LedgerErrors.h"
#include "ledger/LedgerRecordWriter.h"
#include "ledger/LedgerSchema.h"

#include <QDeadlineTimer>
#include <QElapsedTimer>
#include <QFileInfo>
#include <optional>

namespace taxicore {

LedgerBatchWriter::LedgerBatchWriter(const QString &file, const LedgerOptions &options)
    : m_file(file)
    , m_wal(file + QStringLiteral("-wal"))
    , m_options(options)
    , m_health(file)
{
}

LedgerBatchWriter::~LedgerBatchWriter()
{
    stop();
}

QString LedgerBatchWriter::start()
{
    std::promise<QString> started;
    std::future<QString> result = started.get_future();
    m_thread = std::thread(&LedgerBatchWriter::run, this, std::move(started));
    QString error = result.get();
    if (!error.isEmpty()) {
        m_thread.join();
        return error;
    }
    std::lock_guard lock(m_mutex);
    m_accepting = true;
    return {};
}

void LedgerBatchWriter::append(LedgerRecord record, Done done)
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
        refused = m_accepting ? QStringLiteral("ledger %1: overloaded, %2 records wait for the disk; "
                                               "the record was not written")
                                    .arg(m_file)
                                    .arg(m_queue.size())
                              : QStringLiteral("ledger %1: closed; the record was not written").arg(m_file);
    }
    ++m_failed;
    if (done)
        done(false, refused);
}

bool LedgerBatchWriter::waitUntilIdle(int timeoutMs)
{
    std::unique_lock lock(m_mutex);
    const quint64 target = m_queuedTotal;
    return m_idle.wait_for(lock, std::chrono::milliseconds(timeoutMs),
                           [this, target] { return m_settledTotal >= target; });
}

LedgerStats LedgerBatchWriter::stats() const
{
    LedgerStats s;
    s.appended = m_appended;
    s.committed = m_committed;
    s.failed = m_failed;
    s.transactions = m_transactions;
    s.busyRetries = m_busyRetriesSeen;
    // A file removed under an idle writer is failing already: the next booking would be refused.
    s.failing = m_health.failing() || !m_identity.check().isEmpty();
    return s;
}

void LedgerBatchWriter::stop()
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

void LedgerBatchWriter::run(std::promise<QString> started)
{
    LedgerConnection connection;
    QString error = openFile(connection);
    std::optional<LedgerRecordWriter> writer;
    if (error.isEmpty()) {
        writer.emplace(connection); // its statements need the open connection
        error = writer->prepare();
    }
    started.set_value(error);
    if (!error.isEmpty())
        return;
    while (waitForWork(connection)) {
        const std::size_t settled = commitBatch(connection, *writer);
        {
            std::lock_guard lock(m_mutex);
            m_settledTotal += settled;
        }
        m_idle.notify_all();
        checkpointIfDue(connection);
        m_busyRetriesSeen = m_busyRetries;
    }
}

QString LedgerBatchWriter::openFile(LedgerConnection &connection)
{
    QString error = connection.open(m_file, m_options, LedgerConnection::Role::Writer);
    if (error.isEmpty())
        error = m_identity.record(m_file);
    if (error.isEmpty() && m_options.verifyOnOpen)
        error = connection.quickCheck();
    if (error.isEmpty())
        error = migrateLedger(connection, m_options.busyTimeoutMs);
    if (error.isEmpty()) {
        m_identity.recordWal(); // there after the migration's transaction (and -shm since the open)
        m_fingerprint = m_identity.fingerprint();
    }
    // A worker: what it opened must be its primary's files (SqliteLedger::open checked them before
    // the open; this closes the gap between the two).
    if (error.isEmpty() && !m_options.expectedFiles.isEmpty() && m_fingerprint != m_options.expectedFiles)
        error = LedgerFileIdentity::verify(m_file, m_options.expectedFiles);
    if (error.isEmpty() && !m_options.expectedFiles.isEmpty() && m_fingerprint != m_options.expectedFiles)
        error = QStringLiteral("ledger %1: its files changed while this process opened them: not the one its "
                               "primary opened; not used here: restart the server")
                    .arg(m_file);
    // From now on BEGIN/COMMIT retry on SQLITE_BUSY themselves, with short jittered pauses.
    if (error.isEmpty())
        error = connection.setBusyTimeout(0);
    return error;
}

// False once stopping and the queue is drained. While commits sit in the WAL, a wait without work
// for a checkpoint interval empties it (and is tried again each interval until it succeeds).
bool LedgerBatchWriter::waitForWork(LedgerConnection &connection)
{
    const auto workOrStop = [this] { return !m_queue.empty() || m_stopping; };
    std::unique_lock lock(m_mutex);
    while (!workOrStop()) {
        if (!m_walHoldsCommits || m_options.checkpointIntervalMs <= 0) {
            m_wake.wait(lock, workOrStop);
            break;
        }
        if (m_wake.wait_for(lock, std::chrono::milliseconds(m_options.checkpointIntervalMs), workOrStop))
            break;
        lock.unlock();
        emptyWalWhileIdle(connection);
        lock.lock();
    }
    return !m_queue.empty();
}

// TRUNCATE: the database file then holds every commit and the WAL is empty. Busy (another
// process's connection reads an older snapshot or writes): the next idle interval tries again.
void LedgerBatchWriter::emptyWalWhileIdle(LedgerConnection &connection)
{
    if (m_truncated) {
        m_walHoldsCommits = false; // nothing copied from a truncated file: see checkpointIfDue
        return;
    }
    if (!m_identity.check().isEmpty()) {
        rescueLostWal(connection);
        m_walHoldsCommits = false; // not our file any more: the next transaction says so
        return;
    }
    bool complete = false;
    if (connection.checkpoint(LedgerConnection::Checkpoint::Truncate, &complete).isEmpty() && complete)
        m_walHoldsCommits = false;
    m_lastCheckpointMs = QDeadlineTimer::current().deadline();
}

std::size_t LedgerBatchWriter::commitBatch(LedgerConnection &connection, LedgerRecordWriter &writer)
{
    std::vector<Pending> batch;
    QString error = m_identity.check();
    if (!error.isEmpty())
        rescueLostWal(connection);
    if (error.isEmpty()) {
        error = connection.beginImmediate(m_options.lockedGiveUpMs, &m_busyRetries);
        // Under the write lock: no other process checkpoints or commits while the sizes are read.
        if (error.isEmpty()) {
            error = m_identity.checkSizes();
            if (!error.isEmpty()) {
                connection.rollback();
                m_truncated = true;
            }
        }
    }
    if (!error.isEmpty()) {
        takeQueued(batch);
        m_health.failed(error, m_failed);
        finish(batch, false, error);
        return batch.size();
    }
    QElapsedTimer fed;
    fed.start();
    bool writeFailed = false;
    for (;;) {
        const std::size_t first = batch.size();
        if (takeQueued(batch) == 0)
            break;
        for (std::size_t i = first; i < batch.size() && !writeFailed; ++i) {
            // A refusal (an Idempotency-Key that made another booking) wrote nothing of its
            // record: the others commit together as if it had not been sent.
            const QString verdict = writer.write(batch[i].record);
            if (isLedgerRefusal(verdict))
                batch[i].refused = verdict;
            else
                writeFailed = !verdict.isEmpty();
        }
        if (writeFailed || int(batch.size()) >= m_options.batchMaxRecords || fed.elapsed() >= m_options.batchMaxDelayMs)
            break;
    }
    if (!writeFailed)
        error = connection.commit(m_options.lockedGiveUpMs, &m_busyRetries);
    if (writeFailed) {
        connection.rollback();
        commitOneByOne(connection, writer, batch); // find the bad record; commit the others
    } else if (!error.isEmpty()) {
        connection.rollback();
        m_health.failed(error, m_failed);
        finish(batch, false, error);
    } else {
        ++m_transactions;
        m_walHoldsCommits = true;
        m_health.committed(m_failed);
        finish(batch, true, {});
    }
    return batch.size();
}

// The slow path after a failed statement: each record in its own transaction, its own verdict.
void LedgerBatchWriter::commitOneByOne(LedgerConnection &connection, LedgerRecordWriter &writer,
                                       std::vector<Pending> &batch)
{
    for (std::size_t i = 0; i < batch.size(); ++i) {
        QString error = connection.beginImmediate(m_options.lockedGiveUpMs, &m_busyRetries);
        if (error.isEmpty())
            error = writer.write(batch[i].record);
        const bool refused = isLedgerRefusal(error);
        if (error.isEmpty())
            error = connection.commit(m_options.lockedGiveUpMs, &m_busyRetries);
        if (error.isEmpty()) {
            ++m_transactions;
            m_walHoldsCommits = true;
            m_health.committed(m_failed);
        } else {
            connection.rollback();
            if (!refused) // a refusal is a verdict on its record, not a failing ledger
                m_health.failed(error, m_failed);
        }
        Pending &pending = batch[i];
        (error.isEmpty() ? m_committed : m_failed) += 1;
        if (pending.done)
            pending.done(error.isEmpty(), error);
    }
}

// The WAL was deleted under us: SQLite's connections (ours and other processes') still append to
// the open, unlinked file, the only copy of every commit since the last checkpoint. A TRUNCATE
// checkpoint copies them into the database file, which a restart reads; tried on every refused
// batch and idle interval until complete (another process may be mid-transaction).
void LedgerBatchWriter::rescueLostWal(LedgerConnection &connection)
{
    if (m_walRescued || !m_identity.walLost())
        return;
    bool complete = false;
    if (connection.checkpoint(LedgerConnection::Checkpoint::Truncate, &complete).isEmpty() && complete)
        m_walRescued = true;
}

// Every checkpointIntervalMs a PASSIVE checkpoint (never waits for other processes). It cannot
// empty a WAL that writers keep appending to, and the WAL file never shrinks by itself: past
// walResetBytes a TRUNCATE checkpoint empties it. Busy (another process is mid-transaction or
// checkpointing): tried again after the next batch.
void LedgerBatchWriter::checkpointIfDue(LedgerConnection &connection)
{
    // A truncated file or WAL: a checkpoint would copy what is left of the WAL (some of a commit's
    // pages, not all of them) over the file; the restart's integrity check sees it as it is.
    if (m_options.checkpointIntervalMs <= 0 || m_truncated)
        return;
    const bool large = m_options.walResetBytes > 0 && QFileInfo(m_wal).size() > m_options.walResetBytes;
    // An interval, so on the steady clock: a wall-clock step back stopped the checkpoints for its length.
    const qint64 now = QDeadlineTimer::current().deadline();
    if (!large && now - m_lastCheckpointMs < m_options.checkpointIntervalMs)
        return;
    m_lastCheckpointMs = now;
    bool complete = false;
    connection.checkpoint(large ? LedgerConnection::Checkpoint::Truncate : LedgerConnection::Checkpoint::Passive,
                          &complete);
    if (large && complete)
        m_walHoldsCommits = false;
}

// Moves queued records into the batch, up to its limit; returns how many.
std::size_t LedgerBatchWriter::takeQueued(std::vector<Pending> &batch)
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

void LedgerBatchWriter::finish(std::vector<Pending> &batch, bool committed, const QString &error)
{
    for (Pending &pending : batch) {
        // A refused record stays refused; when the batch failed it is told the batch's error.
        const bool written = committed && pending.refused.isEmpty();
        (written ? m_committed : m_failed) += 1;
        if (pending.done)
            pending.done(written, committed ? pending.refused : error);
    }
}

} // namespace taxicore
