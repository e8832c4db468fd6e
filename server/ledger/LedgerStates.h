#pragma once

#include <QStringView>

namespace taxicore {

// The booking states by the names of fleet/BookingState.h's bookingStateName():
// requested, assigned, arriving, on_trip (open) and completed, cancelled, expired (closed).
// The rank orders them along the state machine, so a late-arriving older transition from another
// process never moves a booking backwards. -1: not a state.
int ledgerStateRank(QStringView state);
bool ledgerStateIsOpen(QStringView state);

} // namespace taxicore
