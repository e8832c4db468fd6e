#include "pricing/PricedRide.h"

#include "city/Geo.h"

#include <cmath>

namespace taxicore {

QuotedTrip quoteTrip(const PricingBoard &pricing, const TripEstimator &estimator, LatLng from, LatLng to)
{
    QuotedTrip q;
    q.tariff = pricing.tariff();
    q.trip = estimator.estimate(from, to);
    q.fare = computeFare(q.tariff, q.trip.distanceM, q.trip.durationS, pricing.surgeAt(from));
    return q;
}

RidePrice priceRide(const PricingBoard &pricing, const TripEstimator &estimator, LatLng pickup,
                    std::optional<LatLng> dropoff)
{
    RidePrice out;
    out.kept.surge = pricing.surgeAt(pickup);
    if (dropoff) {
        out.quote = quoteTrip(pricing, estimator, pickup, *dropoff);
        out.tariff = out.quote->tariff;
        out.kept.surge = out.quote->fare.surge;
        out.kept.hasQuote = true;
        out.kept.quotedDistanceM = out.quote->trip.distanceM;
        out.kept.quotedDurationS = out.quote->trip.durationS;
        out.kept.quote = out.quote->fare;
    } else {
        out.tariff = pricing.tariff();
    }
    return out;
}

FleetStore::EtaRanker etaRankerFor(const TripEstimator &estimator)
{
    return [&estimator](LatLng target, const std::vector<LatLng> &cars) { return estimator.etasTo(target, cars); };
}

FareBreakdown rideFare(const PricingBoard &pricing, const Tariff &tariff, const BookingSnapshot &booking,
                       double distanceM, double seconds, std::optional<LatLng> carAt)
{
    const std::optional<BookingPrice> price = pricing.bookingPrice(booking.id);
    if (price && price->hasQuote) {
        const bool chargedTheQuote =
            booking.state == BookingState::Completed && std::abs(booking.fare - price->quote.total) < 0.005;
        const bool atDropoff = booking.state != BookingState::Completed && booking.hasDropoff && carAt
                               && city::haversineMeters(*carAt, booking.dropoff) <= kAtDropoffM;
        if (chargedTheQuote || atDropoff)
            return price->quote;
    }
    return computeFare(tariff, distanceM, seconds, price ? price->surge : 1.0);
}

CompletedRide beginCompleteRide(FleetStore &fleet, uint64_t id)
{
    CompletedRide out;
    const PricingBoard pricing(fleet.pricing());
    out.tariff = pricing.tariff();
    // Where the rider leaves decides between the quote and the meter.
    const std::optional<BookingSnapshot> before = fleet.booking(id);
    std::optional<LatLng> carAt;
    if (before)
        if (const auto car = fleet.car(before->carId))
            carAt = car->position;
    out.transition = fleet.beginComplete(id, [&](double distanceM, double seconds) {
        out.fare = before ? rideFare(pricing, out.tariff, *before, distanceM, seconds, carAt)
                          : computeFare(out.tariff, distanceM, seconds);
        return out.fare.total;
    });
    return out;
}

} // namespace taxicore
