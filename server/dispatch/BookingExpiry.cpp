#include "dispatch/BookingExpiry.h"

#include "dispatch/FleetLedger.h"
#include "fleet/FleetStore.h"
#include "ledger/Ledger.h"

namespace taxicore {

BookingExpiry::BookingExpiry(FleetStore &fleet, Ledger *ledger)
    : m_fleet(fleet)
    , m_ledger(ledger)
{
}

int BookingExpiry::pickupTimeoutS() const
{
    const int timeout = m_fleet.control().pickupTimeoutS.load(std::memory_order_relaxed);
    return timeout > 0 ? timeout : kDefaultPickupTimeoutS;
}

int BookingExpiry::sweepIfDue(int64_t monotonicNowMs)
{
    if (monotonicNowMs - m_lastSweepMs < kSweepIntervalMs)
        return 0;
    m_lastSweepMs = monotonicNowMs;
    return sweep();
}

int BookingExpiry::sweep()
{
    const double timeoutS = pickupTimeoutS();
    int expired = 0;
    // Every open booking holds its car, so the cars lead to every booking that can expire
    // (a scan of the cars is far shorter than one of the booking ring).
    const int count = m_fleet.carCount();
    for (int id = 1; id <= count; ++id) {
        const auto car = m_fleet.car(id);
        if (!car || car->bookingId == 0)
            continue;
        const auto booking = m_fleet.booking(car->bookingId);
        if (!booking || (booking->state != BookingState::Assigned && booking->state != BookingState::Arriving))
            continue;
        if (m_fleet.simulatedSecondsSince(booking->createdMonoMs, booking->createdMs) < timeoutS)
            continue;
        // Decided under the booking's lock: a pickup that came first wins and nothing happens; a
        // move in progress (the rider boarding) is left to finish, the next sweep looks again.
        const FleetStore::Transition begun = m_fleet.beginExpire(booking->id);
        if (begun.result != FleetStore::TransitionResult::Done)
            continue;
        ++expired;
        // Like the rider's moves: applied once the ledger holds it (a failed commit leaves the
        // booking as the ledger has it, and the next sweep tries again).
        if (!m_ledger) {
            m_fleet.settle(begun, true);
            continue;
        }
        m_ledger->append(transitionRecord(begun.booking), [fleet = &m_fleet, begun](bool committed, const QString &) {
            fleet->settle(begun, committed);
        });
    }
    return expired;
}

} // namespace taxicore
