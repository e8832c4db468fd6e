#include "dispatch/BookingReassign.h"

#include "dispatch/FleetLedger.h"
#include "ledger/Ledger.h"
#include "ledger/LedgerErrors.h"
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
    const FleetStore::Reassignment begun =
        m_fleet.beginReassign(bookingId, carId, kSearchRadiusM, [this](LatLng target, const std::vector<LatLng> &cars) {
            return m_estimator.etasTo(target, cars);
        });
    if (begun.result != FleetStore::ReassignResult::Done)
        return begun;
    if (!m_ledger) {
        const FleetStore::Reassignment settled = m_fleet.settleReassign(begun, true);
        if (recorded)
            recorded(settled, true, {});
        return settled;
    }
    // A transition back to "assigned" with the new car: the ledger's booking row takes the car,
    // so a restart restores the booking with it. Applied (and announced to a cluster) only once
    // committed: a refused commit leaves the booking on its car, as the ledger has it.
    m_ledger->append(transitionRecord(begun.booking),
                     [fleet = &m_fleet, begun, recorded = std::move(recorded)](bool committed, const QString &error) {
                         const FleetStore::Reassignment settled = fleet->settleReassign(begun, committed);
                         // Another node's booking holds the new car: a cluster's copy holds it too,
                         // so the next reassign offers another (as a booking does).
                         if (!committed && error.startsWith(QLatin1StringView(kLedgerCarTaken)))
                             fleet->carTakenElsewhere(begun.car.id);
                         if (recorded)
                             recorded(committed ? settled : begun, committed, error);
                     });
    return begun;
}

} // namespace taxicore
