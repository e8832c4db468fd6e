#include "dispatch/FleetLedger.h"

#include "fleet/FleetStore.h"
#include "ledger/Ledger.h"
#include "ledger/LedgerQueries.h"
#include "region/Clock.h"

#include <algorithm>
#include <atomic>
#include <memory>

namespace taxicore {

BookingRecord bookingRecord(const BookingSnapshot &b, const BookingPrice &price)
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
    r.surge = price.surge;
    if (price.hasQuote) {
        const FareBreakdown &q = price.quote;
        r.quote = LedgerQuote{{q.base, q.distanceCharge, q.timeCharge, q.minimum, q.surge, q.total, {}},
                              price.quotedDistanceM,
                              price.quotedDurationS};
    }
    return r;
}

ProgressRecord progressRecord(const FleetStore &fleet, const BookingSnapshot &b, LatLng carAt, double odometerM)
{
    ProgressRecord r;
    r.bookingId = b.id;
    r.progress.atMs = clock::wallMs();
    r.progress.waitedS = std::max(0.0, fleet.simulatedSecondsSince(b.createdMonoMs, b.createdMs));
    r.progress.carAt = {carAt.lat, carAt.lng};
    if (b.hasDestination)
        r.progress.destination = LedgerPoint{b.destination.lat, b.destination.lng};
    if (b.state == BookingState::OnTrip) {
        r.progress.tripDistanceM = metresOnBoard(b, odometerM);
        r.progress.tripElapsedS = std::max(0.0, fleet.simulatedSecondsSince(b.pickupMonoMs, b.pickupMs));
    }
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
    r.atMs = b.endedMs ? b.endedMs : b.pickupMs ? b.pickupMs : b.arrivedMs ? b.arrivedMs : clock::wallMs();
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
    r.durationS = b.durationS;
    r.fare = {fare.base, fare.distanceCharge, fare.timeCharge, fare.minimum, fare.surge, fare.total, tariff.currency};
    return r;
}

BookingSnapshot bookingSnapshotOf(const BookingRecord &r)
{
    BookingSnapshot b;
    b.id = r.bookingId;
    b.state = parseBookingState(r.state).value_or(BookingState::Assigned);
    b.carId = r.carId;
    b.riderId = r.riderId;
    b.pickup = {r.pickup.lat, r.pickup.lng};
    b.hasDropoff = r.dropoff.has_value();
    if (r.dropoff)
        b.dropoff = {r.dropoff->lat, r.dropoff->lng};
    b.createdMs = r.createdMs;
    b.riderTokenHash = r.riderTokenHash; // the same rider keeps the booking after a restart
    if (b.state == BookingState::OnTrip) {
        b.pickupMs = r.atMs;
        // The metres on board at its last checkpoint: a cluster node's resync meters a trip it
        // did not know on from there (BookingSnapshot::distanceM), never from its whole odometer.
        if (r.progress)
            b.distanceM = r.progress->tripDistanceM;
    }
    if (!isOpen(b.state))
        b.endedMs = r.atMs;
    if (r.progress && r.progress->destination) {
        b.hasDestination = true;
        b.destination = {r.progress->destination->lat, r.progress->destination->lng};
    }
    return b;
}

BookingSnapshot bookingSnapshotOf(const StoredBooking &stored)
{
    BookingSnapshot b = bookingSnapshotOf(stored.booking);
    if (const auto &trip = stored.trip) {
        b.distanceM = trip->distanceM;
        b.durationS = trip->durationS;
        b.fare = trip->fare.total;
        b.endedMs = trip->endedMs;
    }
    return b;
}

BookingPrice bookingPriceOf(const BookingRecord &record)
{
    BookingPrice price;
    price.surge = record.surge.value_or(1.0);
    if (record.quote) {
        const LedgerFare &q = record.quote->fare;
        price.hasQuote = true;
        price.quotedDistanceM = record.quote->distanceM;
        price.quotedDurationS = record.quote->durationS;
        price.quote = {q.base, q.distanceCharge, q.timeCharge, q.minimum, price.surge, q.total};
    }
    return price;
}

int restoreFromLedger(FleetStore &fleet, const LedgerQueries &reader, QString &error,
                      std::vector<BookingSnapshot> *unplaced)
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
        BookingSnapshot b = bookingSnapshotOf(r);
        if (!isOpen(b.state) || b.state == BookingState::Requested)
            b.state = BookingState::Assigned;
        TripProgress progress;
        if (r.progress) {
            progress.valid = true;
            progress.carAt = {r.progress->carAt.lat, r.progress->carAt.lng};
            progress.hasDestination = r.progress->destination.has_value();
            if (r.progress->destination)
                progress.destination = {r.progress->destination->lat, r.progress->destination->lng};
            progress.tripDistanceM = r.progress->tripDistanceM;
            progress.tripElapsedS = r.progress->tripElapsedS;
            if (r.progress->waitedS) {
                progress.waitedS = *r.progress->waitedS;
                progress.checkpointMs = r.progress->atMs;
            }
        }
        if (!fleet.restoreBooking(b, progress)) {
            if (unplaced)
                unplaced->push_back(b);
            continue;
        }
        ++restored;
        // Its fare: the quote it was answered, or metered with the surge it was booked at.
        PricingBoard(fleet.pricing()).recordBookingPrice(b.id, bookingPriceOf(r));
    }
    return restored;
}

int endUnplacedBookings(Ledger &ledger, const std::vector<BookingSnapshot> &bookings, int timeoutMs)
{
    auto committed = std::make_shared<std::atomic<int>>(0);
    const qint64 now = clock::wallMs();
    for (BookingSnapshot expired : bookings) {
        expired.state = BookingState::Expired;
        expired.endedMs = now;
        ledger.append(transitionRecord(expired), [committed](bool ok, const QString &) {
            if (ok)
                committed->fetch_add(1, std::memory_order_relaxed);
        });
    }
    ledger.waitUntilIdle(timeoutMs);
    return committed->load(std::memory_order_relaxed);
}

} // namespace taxicore
