#pragma once

#include <optional>

#include <QLatin1StringView>
#include <cstdint>

namespace taxicore {

// The booking state machine:
// requested → assigned → arriving → on_trip → completed, and cancelled from assigned/arriving;
// expired from assigned/arriving when nobody boarded within the pickup timeout (BookingExpiry).
enum class BookingState : uint32_t {
    Requested = 0,
    Assigned = 1,
    Arriving = 2,
    OnTrip = 3,
    Completed = 4,
    Cancelled = 5,
    Expired = 6,
};

QLatin1StringView bookingStateName(BookingState state);
// The state a name stands for (the ledger stores names); none for an unknown name.
std::optional<BookingState> parseBookingState(QStringView name);
bool isOpen(BookingState state);
// The only legal moves; everything else is answered 409 naming the current state.
bool canTransition(BookingState from, BookingState to);

} // namespace taxicore
