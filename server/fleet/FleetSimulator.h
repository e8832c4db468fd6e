#pragma once

#include "fleet/FleetTypes.h"

#include <QObject>
#include <QTimer>
#include <random>
#include <vector>

namespace taxicore {

class FleetStore;

// Moves the simulated cars: idle cars cruise between random points, an assigned car drives to
// its pickup and waits, a car on a trip drives to the drop-off and waits for the rider to leave.
// Cars a real device reports for are left alone. Deterministic for a given seed and tick count.
class FleetSimulator : public QObject {
    Q_OBJECT
public:
    static constexpr int kTickMs = 200;
    static constexpr double kCruiseSpeedKmh = 30.0;

    FleetSimulator(FleetStore &fleet, quint64 seed, double speedFactor, QObject *parent = nullptr);

    // A random point in the inner city, where cars start and cruise to.
    LatLng randomPoint();
    void start();
    void stop();
    // Advances every car by `seconds` of simulated time (tests call this directly).
    void step(double seconds);

private:
    FleetStore &m_fleet;
    std::mt19937_64 m_random;
    double m_speedFactor;
    std::vector<LatLng> m_cruiseTargets;
    QTimer m_timer;
};

} // namespace taxicore
