#include "fleet/FleetSimulator.h"

#include "fleet/FleetStore.h"
#include "geo/GeoMath.h"

namespace taxicore {

namespace {
// Where simulated cars roam: the inner city, so riders there find cars nearby.
constexpr double kSouth = 57.680, kNorth = 57.730, kWest = 11.920, kEast = 12.020;
constexpr double kArrivedM = 5.0;
} // namespace

FleetSimulator::FleetSimulator(FleetStore &fleet, quint64 seed, double speedFactor, QObject *parent)
    : QObject(parent)
    , m_fleet(fleet)
    , m_random(seed)
    , m_speedFactor(speedFactor)
    , m_timer(this)
{
    m_timer.setInterval(kTickMs);
    connect(&m_timer, &QTimer::timeout, this, [this] { step(kTickMs / 1000.0 * m_speedFactor); });
}

LatLng FleetSimulator::randomPoint()
{
    std::uniform_real_distribution<double> lat(kSouth, kNorth), lng(kWest, kEast);
    const double a = lat(m_random);
    return {a, lng(m_random)};
}

void FleetSimulator::start()
{
    m_timer.start();
}

void FleetSimulator::stop()
{
    m_timer.stop();
}

void FleetSimulator::step(double seconds)
{
    const int count = m_fleet.carCount();
    if (int(m_cruiseTargets.size()) < count)
        m_cruiseTargets.resize(std::size_t(count), LatLng{});
    const double reach = kCruiseSpeedKmh / 3.6 * seconds;
    for (int id = 1; id <= count; ++id) {
        if (m_fleet.isDeviceDriven(id))
            continue;
        const auto car = m_fleet.car(id);
        if (!car || car->state == CarState::Offline)
            continue;
        std::optional<LatLng> target;
        if (car->state == CarState::Available) {
            LatLng &cruise = m_cruiseTargets[std::size_t(id - 1)];
            if (cruise.lat == 0 || geo::distanceM(car->position, cruise) < kArrivedM)
                cruise = randomPoint();
            target = cruise;
        } else if (const auto booking = m_fleet.booking(car->bookingId)) {
            if (booking->state == BookingState::Assigned)
                target = booking->pickup;
            else if (booking->state == BookingState::OnTrip && booking->hasDropoff)
                target = booking->dropoff;
        }
        if (!target || geo::distanceM(car->position, *target) < 0.5) {
            if (car->speedKmh != 0)
                m_fleet.updatePosition(id, car->position, car->heading, 0, false);
            continue; // waiting for its rider
        }
        const LatLng next = geo::moveTowards(car->position, *target, reach);
        m_fleet.updatePosition(id, next, float(geo::bearingDeg(car->position, *target)),
                               float(kCruiseSpeedKmh), false);
    }
}

} // namespace taxicore
