#include "fleet/FleetLedger.h"

#include "fleet/FleetStore.h"
#include "ledger/LedgerReader.h"

namespace taxicore {

BookingRecord bookingRecord(const BookingSnapshot &b)
{
    BookingRecord r;
    r.bookingId = b.id;
    r.state = QString(bookingStateName(b.state));
    r.carId = b.carId;
    r.riderId = b.riderId;
    r.pickup = {b.pickup.lat, b.pickup.lng};
    if (b.hasDropoff)
        r.dropoff = LedgerPoint{b.dropoff.lat, b.dropoff.lng};
    r.createdMs = b.createdMs;
    r.atMs = b.createdMs;
    r.riderTokenHash = b.riderTokenHash;
    return r;
}

TransitionRecord transitionRecord(const BookingSnapshot &b)
{
    TransitionRecord r;
    r.bookingId = b.id;
    r.state = QString(bookingStateName(b.state));
    r.carId = b.carId;
    // Each move carries the time it happened, not the time it is recorded: the ledger uses it to
    // ignore an arrival recorded after an operator already gave the booking another car.
    r.atMs = b.endedMs   ? b.endedMs
             : b.pickupMs  ? b.pickupMs
             : b.arrivedMs ? b.arrivedMs
                           : FleetStore::nowMs();
    return r;
}

TripRecord tripRecord(const BookingSnapshot &b, const FareBreakdown &fare, const Tariff &tariff)
{
    TripRecord r;
    r.bookingId = b.id;
    r.carId = b.carId;
    r.riderId = b.riderId;
    r.startedMs = b.pickupMs;
    r.endedMs = b.endedMs;
    r.distanceM = b.distanceM;
    r.durationS = double(b.endedMs - b.pickupMs) / 1000.0;
    r.fare = {fare.base, fare.distanceCharge, fare.timeCharge, fare.minimum, fare.surge, fare.total, tariff.currency};
    return r;
}

int restoreFromLedger(FleetStore &fleet, const LedgerReader &reader, QString &error)
{
    const auto maxId = reader.maxBookingId();
    if (!maxId.ok()) {
        error = maxId.error;
        return -1;
    }
    fleet.control().nextBookingId.store(maxId.value, std::memory_order_release);
    const auto open = reader.openBookings();
    if (!open.ok()) {
        error = open.error;
        return -1;
    }
    int restored = 0;
    for (const BookingRecord &r : open.value) {
        BookingSnapshot b;
        b.id = r.bookingId;
        b.state = r.state == QStringLiteral("on_trip") ? BookingState::OnTrip
            : r.state == QStringLiteral("arriving") ? BookingState::Arriving
                                                     : BookingState::Assigned;
        b.carId = r.carId;
        b.riderId = r.riderId;
        b.pickup = {r.pickup.lat, r.pickup.lng};
        b.hasDropoff = r.dropoff.has_value();
        if (r.dropoff)
            b.dropoff = {r.dropoff->lat, r.dropoff->lng};
        b.createdMs = r.createdMs;
        b.riderTokenHash = r.riderTokenHash; // the same rider keeps the booking after a restart
        if (b.state == BookingState::OnTrip)
            b.pickupMs = r.atMs;
        if (fleet.restoreBooking(b))
            ++restored;
    }
    return restored;
}

} // namespace taxicore
