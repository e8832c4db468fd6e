#pragma once

#include "ledger/CommitHealth.h"
#include "ledger/LedgerOptions.h"
#include "ledger/LedgerRecords.h"
#include "ledger/LedgerStats.h"
#include "ledger/PostgresCommitOutcome.h"
#include "ledger/PostgresConnection.h"

#include <QString>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace taxicore {

class PostgresNodeSlot;

// Group commit into PostgreSQL: one thread owns the write connection and turns the queue of
// appended records into transactions, each sent as one pipeline (BEGIN, one statement writing every
// record of the batch set-based — taxicore_apply_batch, which first locks the rows in one order —,
// COMMIT, sync: one round trip, one durable commit). A record the database refuses (car taken,
// booking already ended) fails alone; the others commit. A failed statement (bad data, deadlock)
// replays the batch one record per transaction. A batch whose answer is lost (the connection cut,
// PostgreSQL stalled past the statement timeout) may have committed: the writer reconnects and
// reads its mark (PostgresCommitOutcome) before any of its callbacks runs, so a record is reported
// committed exactly when it is; until the database can say, the batch waits and what is appended
// meanwhile is refused at once. Callbacks run on this thread, in append order, after the commit.
// A failed transaction (the database gone, or refusing to commit) makes stats().failing true until
// the next commit; the log says when that starts and ends (CommitHealth, as for the SQLite ledger).
// While failing with nothing to commit, the thread probes the database every kProbeIntervalMs
// (reconnect, SELECT 1, within the connect and statement timeouts) and a probe that answers ends
// the outage too: a worker that gets no booking after the database is back must not stay failing.
class PostgresBatchWriter {
public:
    static constexpr int kProbeIntervalMs = 1000;
    // Every this many batches the writer deletes its settled marks, in the batch's transaction.
    static constexpr int kForgetEvery = 64;

    using Done = std::function<void(bool committed, const QString &error)>;

    PostgresBatchWriter(const LedgerOptions &options, PostgresNodeSlot *slot);
    ~PostgresBatchWriter(); // commits what is queued, then stops

    // Starts the thread: it connects, migrates the schema and prepares. An error, or empty.
    QString start();
    void append(LedgerRecord record, Done done);
    bool waitUntilIdle(int timeoutMs);
    LedgerStats stats() const;

private:
    struct Pending {
        LedgerRecord record;
        Done done;
        QString verdict; // empty: committed
    };

    enum class Work { Commit, Probe, Stop };

    void run(std::promise<QString> started);
    QString connect();
    Work waitForWork();
    void probe();
    std::size_t commitBatch();
    // Sends batch[first..] in one transaction; false when a statement failed (nothing committed).
    // A lost connection is *lost (every verdict set to it).
    bool commitTogether(std::vector<Pending> &batch, std::size_t first, std::size_t end, QString *lost);
    bool settleLostAnswer(const PgSession &session, const PgBatchMark &mark, std::vector<QString> &verdicts,
                          QString *error);
    void failQueued(const QString &why);
    void commitOneByOne(std::vector<Pending> &batch);
    std::size_t takeQueued(std::vector<Pending> &batch);
    // Everything queued, whatever its size: what is refused at once (not a batch to commit).
    std::vector<Pending> takeAllQueued();
    void finish(std::vector<Pending> &batch);
    void stop();

    const LedgerOptions m_options;
    PostgresConnection m_connection; // writer thread only
    PostgresNodeSlot *m_slot;        // re-taken after a reconnect; may be null
    QByteArray m_writerId;           // this writer's name in its batches' marks
    PgSession m_session;             // of m_connection, read when it connected
    qint64 m_batchesSent = 0;        // writer thread only
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::condition_variable m_idle;
    std::deque<Pending> m_queue;
    quint64 m_queuedTotal = 0;
    quint64 m_settledTotal = 0;
    bool m_accepting = false;
    bool m_stopping = false;
    std::thread m_thread;
    CommitHealth m_health;

    std::atomic<quint64> m_appended{0};
    std::atomic<quint64> m_committed{0};
    std::atomic<quint64> m_failed{0};
    std::atomic<quint64> m_transactions{0};
};

} // namespace taxicore
