#pragma once

#include <QString>
#include <atomic>

namespace taxicore {

// Whether a ledger's commits work: failing from a failed transaction until the next commit (or, for PostgreSQL, a probe
// of an idle writer: PostgresBatchWriter). The server's log says so once per change, naming the ledger and the reason,
// so an operator sees where an outage (a full disk, a lost database) starts and ends, not one line per refused record.
// Written by the ledger's writer thread, read from any thread (GET /healthz).
class CommitHealth {
public:
    explicit CommitHealth(QString location);

    // `failedTotal`: the writer's count of refused records so far, for the recovery's line.
    void committed(quint64 failedTotal);
    void failed(const QString &error, quint64 failedTotal);
    bool failing() const { return m_failing.load(std::memory_order_relaxed); }

private:
    const QString m_location;
    std::atomic<bool> m_failing{false};
    quint64 m_failedBefore = 0; // writer thread only: failedTotal when the outage began
};

} // namespace taxicore
