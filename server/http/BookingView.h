#pragma once

#include "fleet/FleetTypes.h"
#include "ledger/LedgerRecords.h"

#include <QJsonObject>

namespace taxicore {

class FleetStore;
class TripEstimator;

// A booking as its rider sees it now (GET /api/v1/bookings/{id} and the live feed alike): the
// booking, its car, eta_s to the pickup while assigned (0 once the car arrived), eta_dropoff_s
// while on trip, the metres and simulated seconds on board and the fare so far. Every duration is
// in simulated seconds (--sim-speed), the one time base of ETAs, trips and time charges.
QJsonObject bookingView(const FleetStore &fleet, const TripEstimator &estimator, const BookingSnapshot &booking);

// A booking the fleet no longer holds (it ended before a restart, or its slot was reused), as the
// ledger has it: the same fields where the ledger knows them, and "from_ledger": true.
QJsonObject storedBookingView(const StoredBooking &stored);

} // namespace taxicore
