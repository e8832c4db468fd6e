#include "runtime/ServiceThread.h"

#include "fleet/FleetStore.h"
#include "http/CityApi.h"
#include "http/ConnectionGuard.h"
#include "http/HttpService.h"
#include "http/OpsApi.h"
#include "http/Router.h"
#include "http/TaxiApi.h"
#include "http/WorkloadApi.h"
#include "metrics/MetricsRecorder.h"
#include "pricing/RoadTripEstimator.h"

#include <QHostAddress>
#include <QThreadPool>
#include <QTimer>
#include <chrono>
#include <memory>
#include <unistd.h>

namespace taxicore {

namespace {
constexpr auto kStartTimeout = std::chrono::seconds(10);
}

ServiceThread::ServiceThread(const ServerOptions &options, FleetStore &fleet,
                             std::shared_ptr<const city::City> city, ConnectionLimits limits)
    : m_options(options)
    , m_fleet(fleet)
    , m_city(std::move(city))
    , m_limits(limits)
{
    setObjectName(QStringLiteral("taxicore-io"));
}

ServiceThread::~ServiceThread()
{
    if (isRunning()) {
        quit();
        wait();
    }
}

ServiceThread::Started ServiceThread::startAndWait()
{
    auto future = m_started.get_future();
    start();
    if (future.wait_for(kStartTimeout) != std::future_status::ready)
        return {false, 0, QStringLiteral("the server did not start within 10 s")};
    return future.get();
}

void ServiceThread::run()
{
    MetricsRecorder metrics(m_fleet.workerSlot(0));
    metrics.slot().pid.store(int32_t(getpid()), std::memory_order_relaxed);
    metrics.slot().state.store(2, std::memory_order_relaxed);

    StraightLineEstimator straightLine;
    std::unique_ptr<RoadTripEstimator> byRoad;
    if (m_city)
        byRoad = std::make_unique<RoadTripEstimator>(*m_city);
    const TripEstimator &estimator = byRoad ? static_cast<const TripEstimator &>(*byRoad) : straightLine;
    Router router;
    TaxiApi taxi(m_fleet, estimator, Tariff{});
    taxi.registerRoutes(router);
    if (m_city)
        registerCityRoutes(router, *m_city);
    registerWorkloadRoutes(router);
    const QByteArray mode = m_options.mode.toLatin1();
    registerOpsRoutes(router, m_fleet, [mode] { return mode; });

    // QHttpServer's bind() takes ownership of the listener: it is deleted with `service`.
    auto *guardOwned = new ConnectionGuard(m_limits, metrics);
    std::unique_ptr<ConnectionGuard> pendingGuard(guardOwned);
    ConnectionGuard &guard = *guardOwned;

    const QHostAddress address(m_options.host == QStringLiteral("localhost") ? QStringLiteral("127.0.0.1")
                                                                             : m_options.host);
    if (!guard.listen(address, m_options.port)) {
        m_started.set_value({false, 0,
                             QStringLiteral("cannot listen on %1:%2: %3")
                                 .arg(m_options.host)
                                 .arg(m_options.port)
                                 .arg(guard.errorString())});
        return;
    }
    QThreadPool pool;
    HttpService service(router, guard, metrics);
    pendingGuard.release();
    if (m_options.mode == QStringLiteral("pool")) {
        if (m_options.threads > 0)
            pool.setMaxThreadCount(m_options.threads);
        service.setThreadPool(&pool);
    }
    m_stopTarget = &guard;
    m_started.set_value({true, guard.serverPort(), {}});
    exec();
    m_stopTarget = nullptr;
    pool.waitForDone();
    metrics.slot().state.store(4, std::memory_order_relaxed);
}

void ServiceThread::drainAndStop(int graceMs)
{
    QObject *target = m_stopTarget.load();
    if (!target || !isRunning()) {
        wait();
        return;
    }
    auto *guard = static_cast<ConnectionGuard *>(target);
    QMetaObject::invokeMethod(guard, [this, guard, graceMs] {
        connect(guard, &ConnectionGuard::allConnectionsClosed, this, &QThread::quit, Qt::DirectConnection);
        QTimer::singleShot(graceMs, guard, [this] { quit(); });
        guard->startDraining();
    }, Qt::QueuedConnection);
    wait();
}

} // namespace taxicore
