#pragma once

#include "fleet/FleetTypes.h"
#include "wire/HttpTypes.h"

#include <QByteArray>
#include <cstdint>

namespace taxicore {

// A booking is its rider's: reading it (GET /api/v1/bookings/{id}, following it on the live feed)
// and moving it (pickup, complete, cancel) need the rider token the booking was answered with, or
// the admin token. Booking ids are sequential, so without this anyone could walk them. A booking
// with no recorded owner (made before ledger schema 3) is open to the admin token only.

// What a presented token proves about a booking whose owner's token hash is `riderTokenHash`.
enum class BookingAccess {
    Granted,  // the rider's token, or the admin token
    NoToken,  // nothing presented
    NotOwner, // some other token
};
BookingAccess bookingAccess(const QByteArray &token, const QByteArray &riderTokenHash);

// Over HTTP the token is `Authorization: Bearer <token>`.
// No token at all → 401 rider_token_required. Asked before the booking is looked up, so without a
// token a booking that exists and one that does not answer alike.
void requireRiderToken(const ApiRequest &request, uint64_t id);
// No token → 401 rider_token_required, another token → 403 not_your_booking.
void requireBookingOwner(const ApiRequest &request, uint64_t id, const QByteArray &riderTokenHash);
void requireBookingOwner(const ApiRequest &request, const BookingSnapshot &booking);

} // namespace taxicore
