#pragma once

#include "fleet/FleetStore.h"
#include "fleet/FleetTypes.h"

#include <QtGlobal>
#include <memory>
#include <random>
#include <vector>

namespace taxicore::city {
class City;
}

namespace taxicore {

class Ledger;
class TripEstimator;

// Books rides so the city looks alive: at the rate in the shared region (rides per real minute,
// PricingBoard::demandRate, 0 = off) it books from a random road point to another one through the
// same path as the rider API (priceRide, FleetStore::book, the ledger), and plays the riders of its own
// bookings: each gets in a short while after its car arrived and leaves at the drop-off. Riders'
// own bookings are never touched. Deterministic for a seed: the same rides in the same order.
// Runs on the primary's simulator thread (FleetSimulator::step calls it).
class DemandGenerator {
public:
    static constexpr double kBoardingWaitS = 20;  // simulated seconds from arrival to pickup
    static constexpr double kDropoffRadiusM = 15; // the trip ends this close to the drop-off
    static constexpr double kMinTripM = 800;      // drop-offs at least this far (straight line)
    static constexpr double kMaxOwedRides = 20;   // a stalled loop does not book a burst later

    DemandGenerator(FleetStore &fleet, std::shared_ptr<const city::City> city, quint64 seed, Ledger *ledger);
    ~DemandGenerator();

    // `realSeconds` drive the booking rate, `simSeconds` the riders' waits.
    void step(double realSeconds, double simSeconds);
    // Plays again the generated rides a restart restored (rider ids demand-…): their riders board
    // and leave as before, instead of holding their cars for ever.
    void adoptRestoredRides();
    void setLedger(Ledger *ledger) { m_ledger = ledger; }
    quint64 ridesBooked() const { return m_serial; }

private:
    struct Ride {
        uint64_t bookingId = 0;
        double waitedS = -1; // at the pickup since; -1 = not arrived yet
    };

    LatLng randomPoint();
    void bookOne();
    // Boards, drops off and forgets the generator's rides; false when the ride is over.
    bool serve(Ride &ride, double simSeconds);
    // Applies a begun move once the ledger committed `recordOf(booking)` (at once without one).
    template <typename RecordOf> void settleAfterCommit(const FleetStore::Transition &move, RecordOf recordOf);

    FleetStore &m_fleet;
    std::shared_ptr<const city::City> m_city;
    std::unique_ptr<TripEstimator> m_estimator;
    std::mt19937_64 m_random;
    Ledger *m_ledger;
    QString m_runId; // demand-<run>-<n>
    double m_owed = 0;
    quint64 m_serial = 0;
    std::vector<Ride> m_rides;
};

} // namespace taxicore
