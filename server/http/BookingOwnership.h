#pragma once

#include "fleet/FleetTypes.h"
#include "wire/HttpTypes.h"

namespace taxicore {

// Rider-facing writes on a booking (pickup, complete, cancel) need the rider token the booking
// was answered with (`Authorization: Bearer <rider_token>`), or the admin token. No token → 401,
// another token → 403. A booking with no recorded owner (made before ledger schema 3) is moved
// only with the admin token.
void requireBookingOwner(const ApiRequest &request, const BookingSnapshot &booking);

} // namespace taxicore
