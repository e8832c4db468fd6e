#include "runtime/ApiStack.h"

#include "city/City.h"
#include "cluster/FleetBackend.h"
#include "fleet/FleetStore.h"
#include "http/AdminApi.h"
#include "http/CityApi.h"
#include "http/ConnectionGuard.h"
#include "http/EventsApi.h"
#include "http/HttpService.h"
#include "http/LiveFeed.h"
#include "http/StaticAssets.h"
#include "http/OpsApi.h"
#include "http/PricingApi.h"
#include "http/ReportApi.h"
#include "ledger/Ledger.h"
#include "runtime/LedgerStatsPublisher.h"
#include "http/RouteTable.h"
#include "http/SharedBookingLimiter.h"
#include "http/TaxiApi.h"
#include "http/WorkloadApi.h"
#include "runtime/QtWarningFilter.h"
#include "control/RuntimeSettings.h"

namespace taxicore {

ApiStack::ApiStack(FleetStore &fleet, std::shared_ptr<const city::City> city, Ledger *ledger, int workerSlot,
                   ConnectionLimits limits, const QString &fleetUrl)
    : m_fleet(fleet)
    , m_city(std::move(city))
    , m_metrics(fleet.workerSlot(workerSlot))
    , m_router(std::make_unique<RouteTable>())
{
    if (m_city) {
        m_byRoad = std::make_unique<RoadTripEstimator>(*m_city);
        // Every process that serves the API builds this stack (the primary's I/O thread and each
        // worker process), so this is where a serving process's fleet is given the city: positions
        // a device reports here are stored with their road place, and nearby's road ETAs start
        // from it instead of snapping those cars again on every request. The simulator does the
        // same in the primary (before it places the cars); the same city again changes nothing.
        m_fleet.locateOnRoads(m_city);
    }
    const TripEstimator &estimator = m_byRoad ? static_cast<const TripEstimator &>(*m_byRoad) : m_straightLine;
    m_taxi = std::make_unique<TaxiApi>(m_fleet, estimator, ledger);
    if (isClusterFleetUrl(fleetUrl)) {
        // Each process of a node has its own connection; the buckets are the cluster's.
        if (const auto endpoint = redis::parseRedisUrl(fleetUrl, nullptr)) {
            m_sharedLimiter = std::make_unique<SharedBookingLimiter>(m_fleet.control(), *endpoint);
            m_taxi->setBookingLimiter(m_sharedLimiter.get());
        }
    }
    m_taxi->registerRoutes(*m_router);
    if (m_city)
        registerCityRoutes(*m_router, *m_city);
    registerWorkloadRoutes(*m_router);
    const FleetStore *store = &m_fleet;
    registerOpsRoutes(*m_router, m_fleet, ledger, workerSlot, [store] {
        return modeName(RuntimeMode(store->control().mode.load(std::memory_order_relaxed))).toLatin1();
    });
    registerAdminRoutes(*m_router, m_fleet, estimator, ledger);
    registerSurgeRoutes(*m_router, m_fleet);
    registerPricingAdminRoutes(*m_router, m_fleet);
    if (ledger) {
        m_ledgerStats = std::make_unique<LedgerStatsPublisher>(*ledger, m_metrics.slot());
        registerReportRoutes(*m_router, ledger->reader(), m_taxi->ledgerLookups());
        registerEventRoutes(*m_router, *ledger);
    }

    registerStaticRoutes(*m_router);
    LiveFeed::registerRoutes(*m_router);

    installQtWarningFilter();
    m_guard = new ConnectionGuard(limits, m_metrics);
    m_guard->countPerClient(m_fleet.control().access, workerSlot);
    m_service = std::make_unique<HttpService>(*m_router, *m_guard, m_metrics);
    m_feed = std::make_unique<LiveFeed>(*m_service, m_fleet);
    m_feed->setEstimator(&estimator);
    m_feed->publishClientCount(m_metrics);
}

ApiStack::~ApiStack() = default;

} // namespace taxicore
