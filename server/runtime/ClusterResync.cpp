#include "runtime/ClusterResync.h"

#include "cluster/ClusterFleet.h"
#include "dispatch/FleetLedger.h"
#include "ledger/LedgerQueries.h"
#include "pricing/PricingBoard.h"

#include <QDebug>
#include <unordered_set>

namespace taxicore {

void resyncFromLedger(ClusterFleet &fleet, const LedgerQueries &reader)
{
    const auto open = reader.openBookings();
    if (!open.ok()) {
        qWarning().noquote() << "cluster: cannot resync from the ledger:" << open.error;
        return;
    }
    std::unordered_set<uint64_t> openInLedger;
    for (const BookingRecord &record : open.value) {
        openInLedger.insert(record.bookingId);
        fleet.applyCommitted(bookingSnapshotOf(record));
        PricingBoard(fleet.pricing()).recordBookingPrice(record.bookingId, bookingPriceOf(record));
    }
    for (const BookingSnapshot &mine : fleet.openBookings()) {
        if (openInLedger.count(mine.id))
            continue;
        const auto stored = reader.booking(mine.id);
        if (!stored.ok() || !stored.value)
            continue;
        // Ended while this copy was not listening: with its trip as billed, which the copy
        // shows its rider (not the metres it heard before the end, nor none).
        const BookingSnapshot ended = bookingSnapshotOf(*stored.value);
        if (!isOpen(ended.state))
            fleet.applyCommitted(ended);
    }
    fleet.releaseHeldCars();
}

} // namespace taxicore
