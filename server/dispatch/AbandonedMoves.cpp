#include "dispatch/AbandonedMoves.h"

#include "dispatch/FleetLedger.h"
#include "fleet/FleetStore.h"
#include "ledger/LedgerQueries.h"
#include "region/Clock.h"

namespace taxicore {

namespace {

// A booking's commit ends within the ledger's give-up time (SQLite's lockedGiveUpMs, 30 s; the
// PostgreSQL statement timeout, 5 s): an open booking its process made longer ago than this was
// committed, or withdrawn by that process itself. Only younger ones are looked up.
constexpr int64_t kUnsettledBookingAgeMs = 120'000;

// Booking `id` as the ledger has it now; `readable` false when the ledger could not be read.
std::optional<BookingSnapshot> recordedBooking(const LedgerQueries *reader, uint64_t id, bool &readable)
{
    readable = true;
    if (!reader)
        return std::nullopt;
    const auto stored = reader->booking(id);
    if (!stored.ok()) {
        readable = false;
        return std::nullopt;
    }
    if (!stored.value)
        return std::nullopt;
    return bookingSnapshotOf(*stored.value);
}

} // namespace

int settleAbandonedMoves(FleetStore &fleet, const LedgerQueries *reader, int pid)
{
    fleet.settleCarClaimsOf(pid);
    // The first lookup that fails ends this try: the ledger is unreachable, and each further
    // lookup would wait its timeout on the primary's control thread (the supervisor's).
    for (const FleetStore::PendingMove &move : fleet.movesPendingFor(pid)) {
        bool readable = true;
        const std::optional<BookingSnapshot> recorded = recordedBooking(reader, move.bookingId, readable);
        if (!readable)
            return 1;
        fleet.settleAbandoned(pid, move, recorded);
    }
    // Bookings it made whose commit never landed: never acknowledged (the 201 follows the commit),
    // so their cars go back to work now rather than at the pickup timeout. (Without a ledger a
    // booking is acknowledged at once: it stays.)
    if (!reader)
        return 0;
    const int64_t now = clock::monotonicMs();
    for (const uint64_t id : fleet.openBookingsMadeBy(pid)) {
        const std::optional<BookingSnapshot> made = fleet.booking(id);
        if (!made || now - made->createdMonoMs > kUnsettledBookingAgeMs)
            continue;
        bool readable = true;
        const bool recorded = recordedBooking(reader, id, readable).has_value();
        if (!readable)
            return 1;
        if (!recorded)
            fleet.withdraw(id);
    }
    return 0;
}

} // namespace taxicore
