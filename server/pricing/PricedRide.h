#pragma once

#include "fleet/FleetStore.h"
#include "pricing/PricingBoard.h"
#include "pricing/Tariff.h"
#include "pricing/TripEstimator.h"

#include <optional>

namespace taxicore {

// A trip priced now: by road, with the tariff in force and the surge of the start's zone.
struct QuotedTrip {
    TripEstimate trip;
    FareBreakdown fare;
    Tariff tariff;
};
QuotedTrip quoteTrip(const PricingBoard &pricing, const TripEstimator &estimator, LatLng from, LatLng to);

// How every booker (the rider API, the demand generator) prices a booking, before its car is
// taken: the surge of the pickup's zone now and, with a drop-off, the quote answered. After
// FleetStore::book() succeeded, PricingBoard::recordBookingPrice(id, price.kept) keeps it with the
// booking, so the fare charged is the quote and every process sees it.
struct RidePrice {
    Tariff tariff;
    std::optional<QuotedTrip> quote; // when a drop-off was given
    BookingPrice kept;
};
RidePrice priceRide(const PricingBoard &pricing, const TripEstimator &estimator, LatLng pickup,
                    std::optional<LatLng> dropoff);

// FleetStore::book()'s ranking of candidate cars: seconds by road to the pickup.
FleetStore::EtaRanker etaRankerFor(const TripEstimator &estimator);

// What a booking costs after `distanceM` metres and `seconds` on board. Booked with a drop-off,
// it is charged its quote (a fixed price) when the trip ends at the drop-off: `carAt` within
// kAtDropoffM of it, or, once completed, when that is what it was charged. Otherwise (no drop-off,
// left elsewhere, restored after a restart) it is metered with the tariff in force and the surge
// captured when it was booked.
inline constexpr double kAtDropoffM = 50.0;
FareBreakdown rideFare(const PricingBoard &pricing, const Tariff &tariff, const BookingSnapshot &booking,
                       double distanceM, double seconds, std::optional<LatLng> carAt);

// Begins completing booking `id` (the rider leaves where its car is) and prices it with
// rideFare(); FleetStore::settle(transition, committed) finishes it once the ledger answered.
struct CompletedRide {
    FleetStore::Transition transition;
    FareBreakdown fare;
    Tariff tariff;
};
CompletedRide beginCompleteRide(FleetStore &fleet, uint64_t id);

} // namespace taxicore
