#pragma once

#include "ledger/LedgerStats.h"

#include <QTimer>

namespace taxicore {

class Ledger;
struct WorkerSlot;

// Copies this process's ledger counters into its worker slot of the shared region, so /metrics
// and /healthz, whichever process serves them, see every process's ledger. Counters go in as
// increments: a slot's totals run on across a respawned worker, as its request counts do. Runs on
// the thread that made it (the loop of the ApiStack that owns it).
class LedgerStatsPublisher {
public:
    static constexpr int kIntervalMs = 250;

    LedgerStatsPublisher(const Ledger &ledger, WorkerSlot &slot);
    ~LedgerStatsPublisher();
    LedgerStatsPublisher(const LedgerStatsPublisher &) = delete;
    LedgerStatsPublisher &operator=(const LedgerStatsPublisher &) = delete;

    void publish();

private:
    const Ledger &m_ledger;
    WorkerSlot &m_slot;
    LedgerStats m_published; // what the slot has had of this process's counters so far
    QTimer m_timer;
};

} // namespace taxicore
