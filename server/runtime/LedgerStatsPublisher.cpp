#include "runtime/LedgerStatsPublisher.h"

#include "ledger/Ledger.h"
#include "region/RegionLayout.h"

namespace taxicore {

LedgerStatsPublisher::LedgerStatsPublisher(const Ledger &ledger, WorkerSlot &slot)
    : m_ledger(ledger)
    , m_slot(slot)
{
    QObject::connect(&m_timer, &QTimer::timeout, [this] { publish(); });
    m_timer.start(kIntervalMs);
    publish();
}

LedgerStatsPublisher::~LedgerStatsPublisher()
{
    publish();
    // The slot outlives this process; a failing ledger that is gone fails nothing.
    m_slot.ledgerFailing.store(0, std::memory_order_relaxed);
}

void LedgerStatsPublisher::publish()
{
    constexpr auto relaxed = std::memory_order_relaxed;
    const LedgerStats now = m_ledger.stats();
    m_slot.ledgerCommitted.fetch_add(now.committed - m_published.committed, relaxed);
    m_slot.ledgerFailed.fetch_add(now.failed - m_published.failed, relaxed);
    m_slot.ledgerFailing.store(now.failing ? 1 : 0, relaxed);
    m_published = now;
}

} // namespace taxicore
