#include "http/BookingView.h"

#include "fleet/BookingState.h"
#include "fleet/FleetStore.h"
#include "http/JsonViews.h"
#include "pricing/PricedRide.h"
#include "pricing/PricingBoard.h"
#include "pricing/TripEstimator.h"

#include <QJsonValue>
#include <algorithm>
#include <cmath>

namespace taxicore {

QJsonObject bookingView(const FleetStore &fleet, const TripEstimator &estimator, const BookingSnapshot &b)
{
    QJsonObject out = bookingJson(b);
    // The car's live view (where it is, what it does, which booking it serves) is this booking's
    // only while the car serves it: once the booking ended (or the car was reassigned away), the
    // car drives someone else, and its former rider must not follow it to their pickup. car_id
    // still says which car it was.
    auto car = isOpen(b.state) ? fleet.car(b.carId) : std::nullopt;
    if (car && car->bookingId != b.id)
        car.reset();
    if (car)
        out.insert(QStringLiteral("car"), carJson(*car));
    // Live while the car comes; once it is at the pickup there is nothing left to wait for it.
    double etaS = 0;
    if (b.state == BookingState::Assigned && car)
        etaS = estimator.estimate(car->position, b.pickup).durationS;
    out.insert(QStringLiteral("eta_s"), std::isfinite(etaS) ? std::round(etaS) : 0.0);
    if (b.hasDestination)
        out.insert(QStringLiteral("destination"), pointJson(b.destination));
    if (b.state == BookingState::OnTrip) {
        QJsonValue toDropoff; // null until the car knows where it goes
        if (car && (b.hasDropoff || b.hasDestination)) {
            const double s = estimator.estimate(car->position, b.hasDropoff ? b.dropoff : b.destination).durationS;
            if (std::isfinite(s))
                toDropoff = std::round(s);
        }
        out.insert(QStringLiteral("eta_dropoff_s"), toDropoff);
    }
    double distance = 0, seconds = 0;
    if (b.state == BookingState::OnTrip && car) {
        distance = metresOnBoard(b, car->odometerM);
        seconds = std::max(0.0, fleet.simulatedSecondsSince(b.pickupMonoMs, b.pickupMs));
    } else if (b.state == BookingState::Completed) {
        distance = b.distanceM;
        seconds = b.durationS;
    }
    out.insert(QStringLiteral("distance_m"), std::round(distance));
    out.insert(QStringLiteral("duration_s"), std::round(seconds));
    if (b.state == BookingState::OnTrip || b.state == BookingState::Completed) {
        const PricingBoard pricing(fleet.pricing());
        const Tariff tariff = pricing.tariff();
        const std::optional<LatLng> carAt = car ? std::optional<LatLng>(car->position) : std::nullopt;
        out.insert(QStringLiteral("fare"), fareJson(rideFare(pricing, tariff, b, distance, seconds, carAt), tariff));
    }
    return out;
}

QJsonObject storedBookingView(const StoredBooking &stored)
{
    const BookingRecord &b = stored.booking;
    QJsonObject out{
        {QStringLiteral("booking_id"), qint64(b.bookingId)},
        {QStringLiteral("state"), b.state},
        {QStringLiteral("rider_id"), b.riderId},
        {QStringLiteral("car_id"), b.carId},
        {QStringLiteral("pickup"), pointJson({b.pickup.lat, b.pickup.lng})},
        {QStringLiteral("eta_s"), 0},
        {QStringLiteral("created_ms"), b.createdMs},
        {QStringLiteral("from_ledger"), true},
    };
    if (b.dropoff)
        out.insert(QStringLiteral("dropoff"), pointJson({b.dropoff->lat, b.dropoff->lng}));
    if (b.state == u"completed" || b.state == u"cancelled" || b.state == u"expired")
        out.insert(QStringLiteral("ended_ms"), b.atMs);
    double distance = 0, seconds = 0;
    if (const auto &trip = stored.trip) {
        distance = trip->distanceM;
        seconds = trip->durationS;
        out.insert(QStringLiteral("pickup_ms"), trip->startedMs);
        out.insert(QStringLiteral("fare"), QJsonObject{
                                               {QStringLiteral("total"), trip->fare.total},
                                               {QStringLiteral("currency"), trip->fare.currency},
                                               {QStringLiteral("base"), trip->fare.base},
                                               {QStringLiteral("distance_charge"), trip->fare.distanceCharge},
                                               {QStringLiteral("time_charge"), trip->fare.timeCharge},
                                               {QStringLiteral("minimum"), trip->fare.minimum},
                                               {QStringLiteral("surge"), trip->fare.surge},
                                           });
    }
    out.insert(QStringLiteral("distance_m"), std::round(distance));
    out.insert(QStringLiteral("duration_s"), std::round(seconds));
    return out;
}

} // namespace taxicore
