#pragma once

#include "fleet/FleetTypes.h"
#include "ledger/LedgerRecords.h"
#include "pricing/Tariff.h"

#include <QString>

namespace taxicore {

class FleetStore;
class LedgerReader;

// How the fleet's bookings and trips are written to the ledger, and read back after a restart.
BookingRecord bookingRecord(const BookingSnapshot &booking);
TransitionRecord transitionRecord(const BookingSnapshot &booking);
TripRecord tripRecord(const BookingSnapshot &booking, const FareBreakdown &fare, const Tariff &tariff);

// Puts every booking the ledger has as open back into the fleet (its car reserved again) and
// continues booking ids after the largest one recorded. Returns how many were restored, or -1
// with `error` set.
int restoreFromLedger(FleetStore &fleet, const LedgerReader &reader, QString &error);

} // namespace taxicore
