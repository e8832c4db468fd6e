#pragma once

#include "wire/ConnectionLimits.h"
#include "metrics/MetricsRecorder.h"
#include "pricing/RoadTripEstimator.h"
#include "pricing/TripEstimator.h"

#include <QObject>
#include <memory>

namespace taxicore::city {
class City;
}

namespace taxicore {

class ConnectionGuard;
class FleetStore;
class HttpService;
class LedgerStatsPublisher;
class LiveFeed;
class Ledger;
class RouteTable;
class SharedBookingLimiter;
class TaxiApi;

// Everything one event loop needs to serve API v1: the routes and their handlers, the
// connection guard and the HTTP service, recording into one worker slot. The primary's I/O
// thread builds one, and so does every worker process: one code path for every mode.
class ApiStack {
public:
    // `ledger` may be null (no durability: tests of the HTTP layer alone). A redis:// `fleetUrl`
    // (a cluster node) takes the booking rate limits to the buckets the nodes share there.
    ApiStack(FleetStore &fleet, std::shared_ptr<const city::City> city, Ledger *ledger, int workerSlot,
             ConnectionLimits limits = {}, const QString &fleetUrl = {});
    ~ApiStack();

    ConnectionGuard &guard() const { return *m_guard; }
    HttpService &service() const { return *m_service; }
    const RouteTable &router() const { return *m_router; }
    LiveFeed &feed() const { return *m_feed; }
    MetricsRecorder &metrics() { return m_metrics; }

private:
    FleetStore &m_fleet;
    std::shared_ptr<const city::City> m_city;
    MetricsRecorder m_metrics;
    StraightLineEstimator m_straightLine;
    std::unique_ptr<RoadTripEstimator> m_byRoad;
    std::unique_ptr<RouteTable> m_router;
    std::unique_ptr<TaxiApi> m_taxi;
    ConnectionGuard *m_guard; // owned by m_service (QHttpServer's bind() takes it)
    std::unique_ptr<HttpService> m_service;
    std::unique_ptr<LiveFeed> m_feed; // after m_service: its WebSockets go first
    // After m_taxi: destroyed first, so the bookings it still decides find their TaxiApi.
    std::unique_ptr<SharedBookingLimiter> m_sharedLimiter;
    std::unique_ptr<LedgerStatsPublisher> m_ledgerStats; // with a ledger
};

} // namespace taxicore
