#include "dispatch/FleetSimulator.h"

#include "city/City.h"
#include "dispatch/BookingExpiry.h"
#include "dispatch/DemandGenerator.h"
#include "dispatch/FleetLedger.h"
#include "fleet/FleetStore.h"
#include "city/Geo.h"
#include "ledger/Ledger.h"
#include "pricing/SurgePublisher.h"

#include <cmath>

namespace taxicore {

namespace {
// Without a city, cars roam the inner city, so riders there find cars nearby.
constexpr double kSouth = 57.680, kNorth = 57.730, kWest = 11.920, kEast = 12.020;
constexpr double kMinSpeedMps = 2.0;
} // namespace

FleetSimulator::FleetSimulator(FleetStore &fleet, std::shared_ptr<const city::City> city, quint64 seed,
                               double speedFactor, QObject *parent)
    : QObject(parent)
    , m_fleet(fleet)
    , m_city(std::move(city))
    , m_random(seed)
    , m_speedFactor(speedFactor)
    , m_timer(this)
{
    SurgeGrid grid;
    if (m_city) {
        const city::GeoBounds b = m_city->bounds();
        grid = SurgeGrid::covering({b.min.lat, b.min.lng}, {b.max.lat, b.max.lng}, SurgeGrid::kCellM, kMaxSurgeCells);
    } else {
        grid = SurgeGrid::covering({kSouth, kWest}, {kNorth, kEast}, SurgeGrid::kCellM, kMaxSurgeCells);
    }
    m_surge = std::make_unique<SurgePublisher>(m_fleet, grid);
    m_demand = std::make_unique<DemandGenerator>(m_fleet, m_city, seed, nullptr);
    m_expiry = std::make_unique<BookingExpiry>(m_fleet, nullptr);
    // Every position the fleet is given is located on these roads as it is written, so nearby's
    // road ETAs start from each car's stored place instead of snapping it again.
    m_fleet.locateOnRoads(m_city);
    m_timer.setInterval(kTickMs / kTickGroups);
    connect(&m_timer, &QTimer::timeout, this, &FleetSimulator::stepNextGroup);
}

FleetSimulator::~FleetSimulator() = default;

LatLng FleetSimulator::randomPoint()
{
    return randomPointIn(m_city.get(), m_random);
}

LatLng FleetSimulator::randomPointIn(const city::City *city, std::mt19937_64 &random)
{
    if (city) {
        const city::RoadPoint p = city->randomRoadPoint(random);
        if (p.valid)
            return {p.point.lat, p.point.lng};
    }
    std::uniform_real_distribution<double> lat(kSouth, kNorth), lng(kWest, kEast);
    const double a = lat(random);
    return {a, lng(random)};
}

void FleetSimulator::setLedger(Ledger *ledger)
{
    m_ledger = ledger;
    m_demand->setLedger(ledger);
    m_expiry = std::make_unique<BookingExpiry>(m_fleet, ledger);
}

void FleetSimulator::recordIfArrived(uint64_t bookingId)
{
    if (!m_ledger)
        return;
    const auto booking = m_fleet.booking(bookingId);
    if (!booking || booking->state != BookingState::Arriving)
        return;
    // Not kept when the ledger did not take it (a restart would bring the booking back assigned
    // and send its car to the pickup again): undone, the car at the pickup makes the arrival, and
    // its record, again on the next tick.
    m_ledger->append(transitionRecord(*booking),
                     [fleet = &m_fleet, id = booking->id, carId = booking->carId](bool committed, const QString &) {
                         if (!committed)
                             fleet->undoArrival(id, carId);
                     });
}

void FleetSimulator::checkpointProgress()
{
    const int64_t now = clock::monotonicMs(); // an interval: a wall-clock step must not stop the checkpoints
    if (!m_ledger || now - m_lastCheckpointMs < kCheckpointIntervalMs)
        return;
    m_lastCheckpointMs = now;
    // After a step of the wall clock, a waiting booking's age can no longer come from its wall-clock
    // creation time at a restart: this round checkpoints its age on the monotonic clock (waitedS).
    const bool clockStepped = m_wallClockSteps.stepped();
    const int count = m_fleet.carCount();
    if (int(m_checkpointedAt.size()) < count)
        m_checkpointedAt.resize(std::size_t(count));
    for (int id = 1; id <= count; ++id) {
        const auto car = m_fleet.car(id);
        if (!car || car->bookingId == 0)
            continue;
        const auto booking = m_fleet.booking(car->bookingId);
        if (!booking || booking->carId != id)
            continue;
        LatLng &last = m_checkpointedAt[std::size_t(id - 1)];
        // A car waiting for its rider has nothing new to say, unless the wall clock stepped; a
        // trip's time on board always has.
        const bool moved = city::haversineMeters(last, car->position) > 0.5;
        const bool waiting = booking->state == BookingState::Assigned || booking->state == BookingState::Arriving;
        if (booking->state == BookingState::OnTrip || (booking->state == BookingState::Assigned && moved)
            || (waiting && clockStepped)) {
            m_ledger->append(progressRecord(m_fleet, *booking, car->position, car->odometerM));
            last = car->position;
        }
    }
}

void FleetSimulator::start()
{
    m_demand->adoptRestoredRides(); // after the restore, before the first step
    m_timer.start();
}

void FleetSimulator::stop()
{
    m_timer.stop();
}

void FleetSimulator::planRoute(Plan &plan, LatLng from, LatLng to)
{
    plan.path.clear();
    plan.next = 0;
    plan.speedMps = kStraightLineSpeedKmh / 3.6;
    if (m_city) {
        const city::Route route = m_city->route(city::GeoPoint{from.lat, from.lng}, city::GeoPoint{to.lat, to.lng});
        if (route.found) {
            for (const city::GeoPoint &p : route.polyline)
                plan.path.push_back({p.lat, p.lng});
            if (route.durationS > 0)
                plan.speedMps = std::max(kMinSpeedMps, route.distanceM / route.durationS);
        }
    }
    plan.path.push_back(to); // the last metres from the road to the exact point
}

double FleetSimulator::remainingS(const Plan &plan, LatLng position)
{
    double metres = 0;
    LatLng from = position;
    for (std::size_t i = plan.next; i < plan.path.size(); ++i) {
        metres += city::haversineMeters(from, plan.path[i]);
        from = plan.path[i];
    }
    return metres / plan.speedMps;
}

LatLng FleetSimulator::chooseDestination(LatLng from)
{
    LatLng best = randomPoint();
    for (int i = 1; i < kDestinationTries; ++i) {
        const double d = city::haversineMeters(from, best);
        if (d >= kMinDestinationM && d <= kMaxDestinationM)
            break;
        best = randomPoint();
    }
    return best;
}

LatLng FleetSimulator::advance(int id, const CarSnapshot &car, Plan &plan, double seconds)
{
    LatLng position = car.position;
    double reach = plan.speedMps * seconds;
    while (reach > 0 && plan.next < plan.path.size()) {
        const LatLng waypoint = plan.path[plan.next];
        const double gap = city::haversineMeters(position, waypoint);
        if (gap <= reach) {
            position = waypoint;
            reach -= gap;
            ++plan.next;
        } else {
            position = city::moveTowards(position, waypoint, reach);
            reach = 0;
        }
    }
    const bool moving = city::haversineMeters(position, car.position) > 0.01;
    // Standing at its pickup yet still assigned: the arrival was undone (its record was refused),
    // and only a report makes it again.
    const bool waitsForArrival = plan.leg == Leg::ToPickup && plan.next >= plan.path.size();
    if (!moving) {
        if (car.speedKmh != 0 || waitsForArrival)
            m_fleet.updatePosition(id, car.position, car.heading, 0, false);
        return car.position;
    }
    m_fleet.updatePosition(id, position, float(city::bearingDeg(car.position, position)), float(plan.speedMps * 3.6),
                           false);
    return position;
}

void FleetSimulator::step(double seconds)
{
    moveCars(seconds, 0, 1);
    runTickWork(seconds);
}

void FleetSimulator::stepNextGroup()
{
    const double seconds = kTickMs / 1000.0 * m_speedFactor;
    moveCars(seconds, m_nextGroup, kTickGroups);
    m_nextGroup = (m_nextGroup + 1) % kTickGroups;
    if (m_nextGroup == 0)
        runTickWork(seconds);
}

void FleetSimulator::moveCars(double seconds, int group, int groups)
{
    const int count = m_fleet.carCount();
    if (int(m_plans.size()) < count)
        m_plans.resize(std::size_t(count));
    for (int id = 1 + group; id <= count; id += groups) {
        if (m_fleet.isDeviceDriven(id))
            continue;
        const auto car = m_fleet.car(id);
        if (!car || car->state == CarState::Offline)
            continue;
        Plan &plan = m_plans[std::size_t(id - 1)];
        Leg leg = Leg::None;
        LatLng target{};
        if (car->state == CarState::Available) {
            leg = Leg::Cruise;
        } else if (const auto booking = m_fleet.booking(car->bookingId)) {
            if (booking->state == BookingState::Assigned) {
                leg = Leg::ToPickup;
                target = booking->pickup;
            } else if (booking->state == BookingState::OnTrip) {
                leg = Leg::ToDropoff;
                target = booking->hasDropoff ? booking->dropoff : booking->destination;
                if (!booking->hasDropoff && !booking->hasDestination) {
                    target = chooseDestination(car->position);
                    m_fleet.setDestination(booking->id, target);
                }
            }
        }
        if (leg == Leg::None) {
            plan = Plan{}; // waiting for its rider
            if (car->speedKmh != 0)
                m_fleet.updatePosition(id, car->position, car->heading, 0, false);
            continue;
        }
        const bool cruiseDone = leg == Leg::Cruise && plan.next >= plan.path.size();
        if (plan.leg != leg || plan.bookingId != car->bookingId || cruiseDone) {
            plan.leg = leg;
            plan.bookingId = car->bookingId;
            planRoute(plan, car->position, leg == Leg::Cruise ? randomPoint() : target);
        }
        const LatLng now = advance(id, *car, plan, seconds);
        if (leg == Leg::ToPickup) {
            m_fleet.setEta(car->bookingId, uint32_t(std::lround(remainingS(plan, now))));
            recordIfArrived(car->bookingId);
        }
    }
}

void FleetSimulator::runTickWork(double seconds)
{
    m_sinceSurgeS += seconds;
    if (m_sinceSurgeS >= kSurgeIntervalS) {
        m_surge->update(m_sinceSurgeS);
        m_sinceSurgeS = 0;
    }
    m_demand->step(seconds / m_speedFactor, seconds);
    m_expiry->sweepIfDue(clock::monotonicMs());
    checkpointProgress();
}

} // namespace taxicore
