#pragma once

#include "fleet/FleetStore.h"

#include <QString>
#include <functional>

namespace taxicore {

class Ledger;
class TripEstimator;

// Gives an open booking another car and records the move in the ledger: the one path for the
// admin API (POST /admin/v1/bookings/{id}/reassign) and the console's "Reassign" action.
class BookingReassign {
public:
    // Runs once the ledger committed the move (on the ledger's writer thread) and the fleet applied
    // it, or once the commit failed (`move`: what was asked, nothing applied); at once when there is
    // no ledger. Not called when nothing moved.
    using Recorded = std::function<void(const FleetStore::Reassignment &move, bool committed, const QString &error)>;

    // `ledger` may be null (no durability).
    BookingReassign(FleetStore &fleet, const TripEstimator &estimator, Ledger *ledger);

    // carId 0: the available car with the smallest road ETA to the pickup. Done: the new car is
    // taken and the move reserved (FleetStore::beginReassign); the booking has the new car once the
    // ledger committed, when `recorded` runs.
    FleetStore::Reassignment operator()(uint64_t bookingId, int carId, Recorded recorded = {}) const;

    // Any car in the service area may be sent (the same search radius as a new booking).
    static constexpr double kSearchRadiusM = 60'000;

private:
    FleetStore &m_fleet;
    const TripEstimator &m_estimator;
    Ledger *m_ledger;
};

} // namespace taxicore
