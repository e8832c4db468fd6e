#include "ledger/LedgerCheckpointer.h"

#include "ledger/LedgerConnection.h"

#include <chrono>

namespace taxicore {

LedgerCheckpointer::LedgerCheckpointer(const QString &file, const LedgerOptions &options)
    : m_file(file)
    , m_options(options)
{
}

LedgerCheckpointer::~LedgerCheckpointer()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
        m_wake.notify_one();
    }
    if (m_thread.joinable())
        m_thread.join();
}

void LedgerCheckpointer::start()
{
    if (m_options.checkpointIntervalMs > 0)
        m_thread = std::thread(&LedgerCheckpointer::run, this);
}

void LedgerCheckpointer::run()
{
    LedgerConnection connection;
    if (!connection.open(m_file, m_options, LedgerConnection::Role::Reader).isEmpty())
        return; // the writer reports problems with the file; SQLite's own checkpoints remain
    const auto interval = std::chrono::milliseconds(m_options.checkpointIntervalMs);
    std::unique_lock lock(m_mutex);
    while (!m_wake.wait_for(lock, interval, [this] { return m_stopping; })) {
        lock.unlock();
        // Busy (another process is checkpointing) or failed: the next round tries again.
        connection.exec(QStringLiteral("PRAGMA wal_checkpoint(PASSIVE)"), QStringLiteral("checkpointing"));
        lock.lock();
    }
}

} // namespace taxicore
