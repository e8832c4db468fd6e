#pragma once

#include "fleet/FleetTypes.h"
#include "ledger/LedgerRecords.h"
#include "pricing/PricingBoard.h"
#include "pricing/Tariff.h"

#include <QString>
#include <vector>

namespace taxicore {

class FleetStore;
class Ledger;
class LedgerQueries;

// How the fleet's bookings and trips are written to the ledger, and read back after a restart.
// A new booking with the price it was booked at (surge, and the quote with a drop-off): what a
// restart gives back to it, so its fare stays the same.
BookingRecord bookingRecord(const BookingSnapshot &booking, const BookingPrice &price);
TransitionRecord transitionRecord(const BookingSnapshot &booking);
// A checkpoint of an open booking's ride: its car at `carAt`, `odometerM` on the car's odometer now.
ProgressRecord progressRecord(const FleetStore &fleet, const BookingSnapshot &booking, LatLng carAt, double odometerM);
TripRecord tripRecord(const BookingSnapshot &booking, const FareBreakdown &fare, const Tariff &tariff);

// A booking as the ledger records it (its latest state, car and times), for a fleet copy: what a
// restart restores, and what a cluster node's copy is brought back to (cluster resync).
BookingSnapshot bookingSnapshotOf(const BookingRecord &record);
// The same, with a completed booking's trip as billed (its metres, seconds, fare and end).
BookingSnapshot bookingSnapshotOf(const StoredBooking &stored);
// The price a booking was booked at, as the ledger keeps it (surge, and the quote with a drop-off):
// whichever node or restart finishes the ride charges it.
BookingPrice bookingPriceOf(const BookingRecord &record);

// Puts every booking the ledger has as open back into the fleet (its car reserved again, where it
// was checkpointed, with the price it was booked at) and continues booking ids after the largest
// one recorded. Returns how many were restored, or -1 with `error` set. An open booking the fleet
// cannot take back (its car is not among this start's --cars, or already holds another booking)
// goes to `unplaced` when given: the caller decides what becomes of it (endUnplacedBookings).
int restoreFromLedger(FleetStore &fleet, const LedgerQueries &reader, QString &error,
                      std::vector<BookingSnapshot> *unplaced = nullptr);

// Ends each of `bookings` as expired in `ledger` (no car will come: the ride cannot happen), so
// its rider is told so and the ledger no longer calls it open. Waits for the commits (at start,
// before anything is served), at most `timeoutMs`; returns how many were committed.
int endUnplacedBookings(Ledger &ledger, const std::vector<BookingSnapshot> &bookings, int timeoutMs);

} // namespace taxicore
