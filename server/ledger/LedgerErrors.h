#pragma once

namespace taxicore {

// How a database ledger refuses a record that lost a compare-and-swap to another node: the error
// passed to append()'s `done(false, error)` starts with one of these, then says why in words
// ("car_taken: car 17 is booked by booking 123"). Nothing of a refused record is written; a
// caller can act on it (a booking tries the next car) instead of answering 503.
inline constexpr auto kLedgerCarTaken = "car_taken";         // the booking's car is claimed by another booking
inline constexpr auto kLedgerBookingMoved = "booking_moved"; // the booking already ended (another node moved it)

} // namespace taxicore
