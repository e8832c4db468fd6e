#pragma once

#include "fleet/FleetTypes.h"

#include <QObject>
#include <QTimer>
#include <memory>
#include <random>
#include <vector>

namespace taxicore::city {
class City;
}

namespace taxicore {

class FleetStore;

// Moves the simulated cars along the streets: idle cars cruise to random road points, an
// assigned car drives its route to the pickup and waits, a car on a trip drives to the drop-off
// and waits for the rider to leave. Without a city, cars drive in straight lines. Cars a real
// device reports for are left alone. Deterministic for a given seed and sequence of steps.
class FleetSimulator : public QObject {
    Q_OBJECT
public:
    static constexpr int kTickMs = 200;
    static constexpr double kStraightLineSpeedKmh = 30.0;

    FleetSimulator(FleetStore &fleet, std::shared_ptr<const city::City> city, quint64 seed,
                   double speedFactor, QObject *parent = nullptr);
    ~FleetSimulator() override;

    // A random point where cars may start and cruise to: on a road when there is a city.
    LatLng randomPoint();
    void start();
    void stop();
    // Advances every car by `seconds` of simulated time (tests call this directly).
    void step(double seconds);

private:
    enum class Leg { None, Cruise, ToPickup, ToDropoff };
    struct Plan {
        Leg leg = Leg::None;
        uint64_t bookingId = 0;
        std::vector<LatLng> path;
        std::size_t next = 0;
        double speedMps = kStraightLineSpeedKmh / 3.6;
    };

    void planRoute(Plan &plan, LatLng from, LatLng to);
    void advance(int id, const CarSnapshot &car, Plan &plan, double seconds);

    FleetStore &m_fleet;
    std::shared_ptr<const city::City> m_city;
    std::mt19937_64 m_random;
    double m_speedFactor;
    std::vector<Plan> m_plans;
    QTimer m_timer;
};

} // namespace taxicore
