#pragma once

#include "fleet/FleetTypes.h"
#include "region/WallClockStepWatch.h"

#include <QObject>
#include <QTimer>
#include <memory>
#include <random>
#include <vector>

namespace taxicore::city {
class City;
}

namespace taxicore {

class BookingExpiry;
class DemandGenerator;
class FleetStore;
class Ledger;
class SurgePublisher;

// Moves the simulated cars along the streets: idle cars cruise to random road points, an
// assigned car drives its route to the pickup (its booking's ETA follows) and waits, a car on a
// trip drives to the drop-off (or, booked without one, to a destination it chooses) and waits for
// the rider to leave. Without a city, cars drive in straight lines. Cars a real
// device reports for are left alone. Deterministic for a given seed and sequence of steps.
// Lives in the primary only, so it is also where run-wide things happen once per tick: the surge
// grid is recomputed and published (SurgePublisher), the demand generator books and plays its
// riders, a car reaching its pickup is recorded in the ledger (the booking becomes arriving),
// bookings nobody boarded in time expire (BookingExpiry) and open rides are checkpointed.
class FleetSimulator : public QObject {
    Q_OBJECT
public:
    static constexpr int kTickMs = 200;
    // Each tick moves the cars in this many groups (id % kTickGroups), kTickMs / kTickGroups
    // apart: every car still moves once per tick, but the positions leave in several smaller
    // batches. All 2,000 at once made a burst every 200 ms in which every cluster node applied
    // them together, and the live feed's follows waited behind it (docs/benchmarks.md §18).
    static constexpr int kTickGroups = 8;
    static constexpr double kStraightLineSpeedKmh = 30.0;
    static constexpr double kSurgeIntervalS = 1.0; // simulated seconds between surge updates
    // Real milliseconds between progress checkpoints of the open bookings (what a restart resumes
    // from): at most this much of a ride is driven again after a kill -9.
    static constexpr int64_t kCheckpointIntervalMs = 1000;
    // A trip without a drop-off goes somewhere this far away (straight line), as riders do.
    static constexpr double kMinDestinationM = 1000;
    static constexpr double kMaxDestinationM = 6000;
    static constexpr int kDestinationTries = 16;

    FleetSimulator(FleetStore &fleet, std::shared_ptr<const city::City> city, quint64 seed, double speedFactor,
                   QObject *parent = nullptr);
    ~FleetSimulator() override;

    // A random point where cars may start and cruise to: on a road when there is a city.
    LatLng randomPoint();
    static LatLng randomPointIn(const city::City *city, std::mt19937_64 &random);
    // Where arrivals and the generated rides' moves are recorded (null: nowhere). Before start().
    void setLedger(Ledger *ledger);
    void start();
    void stop();
    // Advances every car by `seconds` of simulated time (tests call this directly).
    void step(double seconds);
    // What the timer does: the next group of cars by one tick, and the tick's run-wide work
    // (surge, demand, expiry, checkpoints) after its last group.
    void stepNextGroup();

private:
    enum class Leg { None, Cruise, ToPickup, ToDropoff };
    struct Plan {
        Leg leg = Leg::None;
        uint64_t bookingId = 0;
        std::vector<LatLng> path;
        std::size_t next = 0;
        double speedMps = kStraightLineSpeedKmh / 3.6;
    };

    // Advances the cars with id % groups == group by `seconds` of simulated time.
    void moveCars(double seconds, int group, int groups);
    // Once per tick, after every car moved: surge, the demand generator, expiry, checkpoints.
    void runTickWork(double seconds);
    void planRoute(Plan &plan, LatLng from, LatLng to);
    // Moves the car along its plan; returns where it is now.
    LatLng advance(int id, const CarSnapshot &car, Plan &plan, double seconds);
    // Simulated seconds left along the plan from `position`.
    static double remainingS(const Plan &plan, LatLng position);
    // Where a trip booked without a drop-off goes: a road point a plausible ride away.
    LatLng chooseDestination(LatLng from);
    // The booking became arriving while its car drove: record it like the API's moves.
    void recordIfArrived(uint64_t bookingId);
    // Every kCheckpointIntervalMs, records where each moving or on-trip booking's ride stands, and
    // every waiting booking's too in the first round after a wall-clock step.
    void checkpointProgress();

    FleetStore &m_fleet;
    std::shared_ptr<const city::City> m_city;
    std::mt19937_64 m_random;
    double m_speedFactor;
    std::vector<Plan> m_plans;
    Ledger *m_ledger = nullptr;
    std::unique_ptr<SurgePublisher> m_surge;
    double m_sinceSurgeS = 0;
    int64_t m_lastCheckpointMs = 0;
    std::vector<LatLng> m_checkpointedAt; // per car: where its last checkpoint had it
    clock::WallClockStepWatch m_wallClockSteps;
    std::unique_ptr<DemandGenerator> m_demand;
    std::unique_ptr<BookingExpiry> m_expiry;
    QTimer m_timer;
    int m_nextGroup = 0;
};

} // namespace taxicore
