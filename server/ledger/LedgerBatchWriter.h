#pragma once

#include "ledger/CommitHealth.h"
#include "ledger/LedgerFileIdentity.h"
#include "ledger/LedgerOptions.h"
#include "ledger/LedgerRecords.h"
#include "ledger/LedgerStats.h"

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

class LedgerConnection;
class LedgerRecordWriter;

// Group commit: one thread owns the write connection and turns the queue of appended records into
// short transactions. A transaction takes what is queued and keeps taking while more arrives; it
// commits when the queue is empty, after batchMaxRecords records or after batchMaxDelayMs.
// Callbacks run on this thread, in append order, after their transaction committed.
// Checkpoints run here too, between batches and after the callbacks (SQLite's automatic ones run
// inside COMMIT and delay that batch's callbacks by a database fsync). One checkpointing actor per
// process: a second thread checkpointing the same file was seen to starve the truncation. When the
// writer has been idle for a checkpoint interval it empties the WAL, so an idle ledger's bookings
// are all in ledger.sqlite itself: a lost or damaged -wal file then costs nothing.
// Before each transaction it checks that the path still names the file it opened.
class LedgerBatchWriter {
public:
    using Done = std::function<void(bool committed, const QString &error)>;

    LedgerBatchWriter(const QString &file, const LedgerOptions &options);
    ~LedgerBatchWriter(); // commits what is queued, then stops

    // Starts the thread: it opens the file, verifies it and migrates the schema. An error, or
    // empty.
    QString start();
    void append(LedgerRecord record, Done done);
    // Blocks until every record appended so far is committed or failed and its callback has run,
    // at most `timeoutMs`; false on timeout. Not from a callback (it would wait for itself).
    bool waitUntilIdle(int timeoutMs);
    LedgerStats stats() const;
    // LedgerFileIdentity::fingerprint() of the files opened; fixed once start() returned.
    QString fileFingerprint() const { return m_fingerprint; }

private:
    struct Pending {
        LedgerRecord record;
        Done done;
        QString refused; // the record's refusal (isLedgerRefusal): nothing of it written, the batch goes on
    };

    void run(std::promise<QString> started);
    QString openFile(LedgerConnection &connection);
    bool waitForWork(LedgerConnection &connection);
    void emptyWalWhileIdle(LedgerConnection &connection);
    void rescueLostWal(LedgerConnection &connection);
    // Returns how many records it took (each has had its callback run).
    std::size_t commitBatch(LedgerConnection &connection, LedgerRecordWriter &writer);
    void commitOneByOne(LedgerConnection &connection, LedgerRecordWriter &writer, std::vector<Pending> &batch);
    std::size_t takeQueued(std::vector<Pending> &batch);
    void checkpointIfDue(LedgerConnection &connection);
    void finish(std::vector<Pending> &batch, bool committed, const QString &error);
    void stop();

    const QString m_file;
    const QString m_wal;
    const LedgerOptions m_options;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    std::condition_variable m_idle; // signalled after each batch's callbacks ran
    std::deque<Pending> m_queue;
    quint64 m_queuedTotal = 0;  // records ever queued (guarded by m_mutex)
    quint64 m_settledTotal = 0; // of those, how many had their callback run (guarded by m_mutex)
    bool m_accepting = false;
    bool m_stopping = false;
    std::thread m_thread;
    qint64 m_lastCheckpointMs = 0;  // writer thread only; steady-clock milliseconds
    bool m_walHoldsCommits = false; // writer thread only: committed since the WAL was last emptied
    LedgerFileIdentity m_identity;  // writer thread only, recorded at open (check() from any thread)
    QString m_fingerprint;          // set by the writer thread before start() returns
    bool m_walRescued = false;      // writer thread only: a deleted WAL's commits are in the file
    bool m_truncated = false;       // writer thread only: the file or its WAL was truncated under us
    CommitHealth m_health;

    std::atomic<quint64> m_appended{0};
    std::atomic<quint64> m_committed{0};
    std::atomic<quint64> m_failed{0};
    std::atomic<quint64> m_transactions{0};
    quint64 m_busyRetries = 0; // writer thread only; published through m_busyRetriesSeen
    std::atomic<quint64> m_busyRetriesSeen{0};
};

} // namespace taxicore
