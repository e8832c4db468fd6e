#include "dispatch/DemandGenerator.h"

#include "city/City.h"
#include "dispatch/FleetLedger.h"
#include "dispatch/FleetSimulator.h"
#include "fleet/FleetStore.h"
#include "city/Geo.h"
#include "ledger/Ledger.h"
#include "ledger/LedgerErrors.h"
#include "pricing/PricedRide.h"
#include "pricing/PricingBoard.h"
#include "pricing/RoadTripEstimator.h"

#include <algorithm>

namespace taxicore {

namespace {
// Any available car in the service area, as for the rider API.
constexpr double kSearchRadiusM = 60'000;
constexpr int kDropoffTries = 8;
} // namespace

DemandGenerator::DemandGenerator(FleetStore &fleet, std::shared_ptr<const city::City> city, quint64 seed,
                                 Ledger *ledger)
    : m_fleet(fleet)
    , m_city(std::move(city))
    , m_random(seed ^ 0x64656d616e64ULL) // its own stream: cars cruise the same with or without demand
    , m_ledger(ledger)
    // Rider ids unique across runs too: the wall-clock start (base 36) names the run.
    , m_runId(QString::number(qulonglong(clock::wallMs()), 36))
{
    if (m_city)
        m_estimator = std::make_unique<RoadTripEstimator>(*m_city);
    else
        m_estimator = std::make_unique<StraightLineEstimator>();
}

DemandGenerator::~DemandGenerator() = default;

LatLng DemandGenerator::randomPoint()
{
    return FleetSimulator::randomPointIn(m_city.get(), m_random);
}

void DemandGenerator::step(double realSeconds, double simSeconds)
{
    const double rate = PricingBoard(m_fleet.pricing()).demandRate();
    if (rate > 0)
        m_owed = std::min(kMaxOwedRides, m_owed + rate / 60.0 * std::max(0.0, realSeconds));
    else
        m_owed = 0;
    while (m_owed >= 1) {
        m_owed -= 1;
        bookOne();
    }
    m_rides.erase(std::remove_if(m_rides.begin(), m_rides.end(), [&](Ride &ride) { return !serve(ride, simSeconds); }),
                  m_rides.end());
}

void DemandGenerator::adoptRestoredRides()
{
    const int count = m_fleet.carCount();
    for (int id = 1; id <= count; ++id) {
        const auto car = m_fleet.car(id);
        if (!car || car->bookingId == 0)
            continue;
        const auto booking = m_fleet.booking(car->bookingId);
        if (booking && isOpen(booking->state) && booking->riderId.startsWith(QLatin1StringView("demand-")))
            m_rides.push_back({booking->id, -1});
    }
}

void DemandGenerator::bookOne()
{
    const LatLng pickup = randomPoint();
    LatLng dropoff = randomPoint();
    for (int i = 0; i < kDropoffTries && city::haversineMeters(pickup, dropoff) < kMinTripM; ++i)
        dropoff = randomPoint();
    ++m_serial;
    const QString rider = QStringLiteral("demand-%1-%2").arg(m_runId).arg(m_serial);
    // The rider API's path: priced, booked, its price kept, recorded in the ledger.
    PricingBoard pricing(m_fleet.pricing());
    const RidePrice price = priceRide(pricing, *m_estimator, pickup, dropoff);
    const FleetStore::Booking booked = m_fleet.book(rider, pickup, dropoff, kSearchRadiusM, etaRankerFor(*m_estimator));
    if (booked.result != FleetStore::BookResult::Booked)
        return; // no car free: demand the city cannot serve now
    const uint64_t id = booked.booking.id;
    pricing.recordBookingPrice(id, price.kept);
    m_rides.push_back({id, -1});
    if (m_ledger) {
        // As for the API: a booking that cannot be recorded durably does not stand.
        m_ledger->append(bookingRecord(booked.booking, price.kept),
                         [fleet = &m_fleet, id, carId = booked.booking.carId](bool committed, const QString &error) {
                             if (committed) {
                                 fleet->announce(id);
                                 return;
                             }
                             fleet->cancel(id);
                             if (error.startsWith(QLatin1String(kLedgerCarTaken)))
                                 fleet->carTakenElsewhere(carId); // the next tick books another
                             else if (error.startsWith(QLatin1String(kLedgerBookingIdTaken)))
                                 fleet->bookingIdTaken(); // the next tick books under a fresh id
                         });
    }
}

bool DemandGenerator::serve(Ride &ride, double simSeconds)
{
    const auto booking = m_fleet.booking(ride.bookingId);
    if (!booking || !isOpen(booking->state))
        return false;
    if (booking->state == BookingState::Arriving) {
        ride.waitedS = std::max(0.0, ride.waitedS) + simSeconds;
        if (ride.waitedS < kBoardingWaitS)
            return true;
        settleAfterCommit(m_fleet.beginPickup(ride.bookingId), transitionRecord);
        return true;
    }
    if (booking->state != BookingState::OnTrip)
        return true;
    const auto car = m_fleet.car(booking->carId);
    if (!car || city::haversineMeters(car->position, booking->dropoff) > kDropoffRadiusM)
        return true;
    const CompletedRide done = beginCompleteRide(m_fleet, ride.bookingId);
    settleAfterCommit(done.transition, [&done](const BookingSnapshot &b) {
        return LedgerRecord(tripRecord(b, done.fare, done.tariff));
    });
    // Kept until the booking is no longer open: a complete the ledger refused is tried again.
    return true;
}

template <typename RecordOf>
void DemandGenerator::settleAfterCommit(const FleetStore::Transition &move, RecordOf recordOf)
{
    if (move.result != FleetStore::TransitionResult::Done)
        return;
    if (!m_ledger) {
        m_fleet.settle(move, true);
        return;
    }
    // As the rider API: the move shows only once the ledger holds it.
    m_ledger->append(recordOf(move.booking),
                     [fleet = &m_fleet, move](bool committed, const QString &) { fleet->settle(move, committed); });
}

} // namespace taxicore
