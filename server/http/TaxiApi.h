#pragma once

#include "http/HttpTypes.h"
#include "pricing/Tariff.h"

namespace taxicore {

class FleetStore;
class Router;
class TripEstimator;

// API v1: car positions, nearby search, bookings and their trip, fare quotes.
class TaxiApi {
public:
    TaxiApi(FleetStore &fleet, const TripEstimator &estimator, Tariff tariff);
    void registerRoutes(Router &router);

private:
    ApiResponse putPosition(const ApiRequest &request);
    ApiResponse nearby(const ApiRequest &request) const;
    ApiResponse createBooking(const ApiRequest &request);
    ApiResponse getBooking(const ApiRequest &request) const;
    ApiResponse pickup(const ApiRequest &request);
    ApiResponse complete(const ApiRequest &request);
    ApiResponse cancel(const ApiRequest &request);
    ApiResponse quote(const ApiRequest &request) const;
    ApiResponse transitionResponse(const struct BookingTransitionView &view, const char *action) const;

    FleetStore &m_fleet;
    const TripEstimator &m_estimator;
    Tariff m_tariff;
};

} // namespace taxicore
