#include "fleet/BookingState.h"

namespace taxicore {

QLatin1StringView bookingStateName(BookingState state)
{
    switch (state) {
    case BookingState::Requested:
        return QLatin1StringView("requested");
    case BookingState::Assigned:
        return QLatin1StringView("assigned");
    case BookingState::Arriving:
        return QLatin1StringView("arriving");
    case BookingState::OnTrip:
        return QLatin1StringView("on_trip");
    case BookingState::Completed:
        return QLatin1StringView("completed");
    case BookingState::Cancelled:
        return QLatin1StringView("cancelled");
    case BookingState::Expired:
        return QLatin1StringView("expired");
    }
    return QLatin1StringView("unknown");
}

std::optional<BookingState> parseBookingState(QStringView name)
{
    for (const BookingState state :
         {BookingState::Requested, BookingState::Assigned, BookingState::Arriving, BookingState::OnTrip,
          BookingState::Completed, BookingState::Cancelled, BookingState::Expired})
        if (name == bookingStateName(state))
            return state;
    return std::nullopt;
}

bool isOpen(BookingState state)
{
    return state != BookingState::Completed && state != BookingState::Cancelled && state != BookingState::Expired;
}

bool canTransition(BookingState from, BookingState to)
{
    switch (to) {
    case BookingState::Assigned:
        return from == BookingState::Requested;
    case BookingState::Arriving:
        return from == BookingState::Assigned;
    case BookingState::OnTrip:
        return from == BookingState::Arriving;
    case BookingState::Completed:
        return from == BookingState::OnTrip;
    case BookingState::Cancelled:
    case BookingState::Expired:
        return from == BookingState::Requested || from == BookingState::Assigned || from == BookingState::Arriving;
    case BookingState::Requested:
        return false;
    }
    return false;
}

} // namespace taxicore
