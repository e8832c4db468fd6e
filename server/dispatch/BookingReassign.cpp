#include "dispatch/BookingReassign.h"

#include "dispatch/FleetLedger.h"
#include "ledger/Ledger.h"
#include "pricing/TripEstimator.h"

namespace taxicore {

BookingReassign::BookingReassign(FleetStore &fleet, const TripEstimator &estimator, Ledger *ledger)
    : m_fleet(fleet)
    , m_estimator(estimator)
    , m_ledger(ledger)
{
}

FleetStore::Reassignment BookingReassign::operator()(uint64_t bookingId, int carId, Recorded recorded) const
{
    const FleetStore::Reassignment move =
        m_fleet.reassign(bookingId, carId, kSearchRadiusM, [this](LatLng target, const std::vector<LatLng> &cars) {
            return m_estimator.etasTo(target, cars);
        });
    if (move.result != FleetStore::ReassignResult::Done)
        return move;
    if (!m_ledger) {
        if (recorded)
            recorded(move, true, {});
        return move;
    }
    // A transition back to "assigned" with the new car: the ledger's booking row takes the car,
    // so a restart restores the booking with it.
    m_ledger->append(transitionRecord(move.booking),
                     [fleet = &m_fleet, move, recorded = std::move(recorded)](bool committed, const QString &error) {
                         if (committed)
                             fleet->announce(move.booking.id);
                         if (recorded)
                             recorded(move, committed, error);
                     });
    return move;
}

} // namespace taxicore
