#include "dispatch/AbandonedMoves.h"

#include "dispatch/FleetLedger.h"
#include "fleet/FleetStore.h"
#include "ledger/LedgerQueries.h"

namespace taxicore {

int settleAbandonedMoves(FleetStore &fleet, const LedgerQueries *reader, int pid)
{
    int left = 0;
    for (const FleetStore::PendingMove &move : fleet.movesPendingFor(pid)) {
        std::optional<BookingSnapshot> recorded;
        if (reader) {
            const auto stored = reader->booking(move.bookingId);
            if (!stored.ok()) {
                ++left;
                continue;
            }
            if (stored.value) {
                recorded = bookingSnapshotOf(stored.value->booking);
                if (const auto &trip = stored.value->trip) {
                    recorded->distanceM = trip->distanceM;
                    recorded->durationS = trip->durationS;
                    recorded->fare = trip->fare.total;
                    recorded->endedMs = trip->endedMs;
                }
            }
        }
        fleet.settleAbandoned(pid, move, recorded);
    }
    return left;
}

} // namespace taxicore
