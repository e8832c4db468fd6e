#include "dispatch/AbandonedMoves.h"

#include "dispatch/FleetLedger.h"
#include "fleet/FleetStore.h"
#include "ledger/LedgerQueries.h"

namespace taxicore {

namespace {

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
    BookingSnapshot recorded = bookingSnapshotOf(stored.value->booking);
    if (const auto &trip = stored.value->trip) {
        recorded.distanceM = trip->distanceM;
        recorded.durationS = trip->durationS;
        recorded.fare = trip->fare.total;
        recorded.endedMs = trip->endedMs;
    }
    return recorded;
}

} // namespace

int settleAbandonedMoves(FleetStore &fleet, const LedgerQueries *reader, int pid)
{
    int left = 0;
    for (const FleetStore::PendingMove &move : fleet.movesPendingFor(pid)) {
        bool readable = true;
        const std::optional<BookingSnapshot> recorded = recordedBooking(reader, move.bookingId, readable);
        if (!readable) {
            ++left;
            continue;
        }
        fleet.settleAbandoned(pid, move, recorded);
    }
    // Bookings it made whose commit never landed: never acknowledged (the 201 follows the commit),
    // so their cars go back to work now rather than at the pickup timeout. (Without a ledger a
    // booking is acknowledged at once: it stays.)
    if (!reader)
        return left;
    for (const uint64_t id : fleet.openBookingsMadeBy(pid)) {
        bool readable = true;
        const bool recorded = recordedBooking(reader, id, readable).has_value();
        if (!readable)
            ++left;
        else if (!recorded)
            fleet.withdraw(id);
    }
    return left;
}

} // namespace taxicore
