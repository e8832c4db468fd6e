#include "runtime/ServerHost.h"

#include "City.h"
#include "fleet/FleetSimulator.h"
#include "fleet/FleetStore.h"
#include "fleet/SharedRegion.h"
#include "metrics/PrometheusText.h"
#include "runtime/CityLocator.h"
#include "runtime/ServiceThread.h"

#include <QThread>

namespace taxicore {

ServerHost::ServerHost(ServerOptions options, QObject *parent)
    : QObject(parent)
    , m_options(std::move(options))
{
}

ServerHost::~ServerHost()
{
    stop(0);
}

bool ServerHost::start(QString &error)
{
    if (m_options.mode == QStringLiteral("processes")) {
        error = QStringLiteral("--mode processes is not available in this build yet; use single or pool");
        return false;
    }
    const QString cityPath = m_options.cityPath.isEmpty() ? bundledCityPath() : m_options.cityPath;
    if (cityPath.isEmpty()) {
        error = QStringLiteral("the bundled city file is missing (reinstall, or pass --city PATH)");
        return false;
    }
    city::CityLoadResult loaded = city::City::load(cityPath);
    if (!loaded.city) {
        error = QStringLiteral("cannot load the city: %1").arg(loaded.error);
        return false;
    }
    m_city = std::move(loaded.city);

    m_region = SharedRegion::create(error);
    if (!m_region)
        return false;
    m_fleet = std::make_unique<FleetStore>(*m_region);
    m_fleet->control().startedMs.store(FleetStore::nowMs());

    m_simulator = std::make_unique<FleetSimulator>(*m_fleet, m_city, m_options.seed, m_options.simSpeed);
    m_fleet->initialiseCars(m_options.cars, [this](int) { return m_simulator->randomPoint(); });
    m_simulationThread = std::make_unique<QThread>();
    m_simulationThread->setObjectName(QStringLiteral("taxicore-sim"));
    m_simulator->moveToThread(m_simulationThread.get());
    m_simulationThread->start();
    QMetaObject::invokeMethod(m_simulator.get(), &FleetSimulator::start, Qt::QueuedConnection);

    m_thread = std::make_unique<ServiceThread>(m_options, *m_fleet, m_city);
    const ServiceThread::Started started = m_thread->startAndWait();
    if (!started.ok) {
        error = started.error;
        stop(0);
        return false;
    }
    QUrl url;
    url.setScheme(QStringLiteral("http"));
    url.setHost(m_options.host);
    url.setPort(started.port);
    m_url = url;
    return true;
}

void ServerHost::stop(int graceMs)
{
    if (m_thread) {
        m_thread->drainAndStop(graceMs);
        m_thread.reset();
    }
    if (m_simulationThread) {
        // Its timer belongs to the simulation thread and must be stopped there.
        QMetaObject::invokeMethod(m_simulator.get(), &FleetSimulator::stop, Qt::BlockingQueuedConnection);
        m_simulationThread->quit();
        m_simulationThread->wait();
        m_simulator.reset();
        m_simulationThread.reset();
    }
}

QUrl ServerHost::url() const
{
    return m_url;
}

QString ServerHost::mode() const
{
    return m_options.mode;
}

quint64 ServerHost::requestsServed() const
{
    return m_fleet ? totalRequests(*m_fleet) : 0;
}

FleetStore &ServerHost::fleet() const
{
    return *m_fleet;
}

} // namespace taxicore
