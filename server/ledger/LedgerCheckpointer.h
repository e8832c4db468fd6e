#pragma once

#include "ledger/LedgerOptions.h"

#include <QString>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace taxicore {

// Moves the WAL into the database file every checkpointIntervalMs on its own connection and
// thread (PASSIVE: never blocks writers). Without it SQLite checkpoints inside a writer's COMMIT,
// and that commit's callbacks wait for a database-file fsync (the p99 in README.md).
class LedgerCheckpointer {
public:
    LedgerCheckpointer(const QString &file, const LedgerOptions &options);
    ~LedgerCheckpointer();
    LedgerCheckpointer(const LedgerCheckpointer &) = delete;
    LedgerCheckpointer &operator=(const LedgerCheckpointer &) = delete;

    void start();

private:
    void run();

    const QString m_file;
    const LedgerOptions m_options;
    std::mutex m_mutex;
    std::condition_variable m_wake;
    bool m_stopping = false;
    std::thread m_thread;
};

} // namespace taxicore
