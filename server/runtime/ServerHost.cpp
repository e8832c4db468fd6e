#include "runtime/ServerHost.h"

#include "city/City.h"
#include "dispatch/FleetLedger.h"
#include "dispatch/FleetSimulator.h"
#include "cluster/ClusterFleet.h"
#include "cluster/FleetBackend.h"
#include "cluster/LeaderLease.h"
#include "cluster/NodeDirectory.h"
#include "fleet/FleetStore.h"
#include "region/SharedRegion.h"
#include "region/WorkerProtocol.h"
#include "ledger/Ledger.h"
#include "metrics/PrometheusText.h"
#include "pricing/PricingBoard.h"
#include "http/AdminApi.h"
#include "http/OperatorAccess.h"
#include "runtime/AccessSettings.h"
#include "runtime/AdminTokenFile.h"
#include "runtime/CityLocator.h"
#include "runtime/ClusterResync.h"
#include "runtime/DataDirLock.h"
#include "runtime/LedgerFileLock.h"
#include "runtime/NodeStatusSampler.h"
#include "control/EventLog.h"
#include "runtime/RuntimeController.h"
#include "control/RuntimeMailbox.h"
#include "runtime/PrimaryIoThread.h"

#include <QCoreApplication>
#include <QDebug>
#include <QDeadlineTimer>
#include <QRandomGenerator>
#include <QStandardPaths>
#include <QThread>
#include <algorithm>

namespace taxicore {

namespace {
constexpr int kBusyRetryMs = 5; // between asks while another runtime change is being applied
}

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
    // First: a second server on the same directory would acknowledge bookings the first one's
    // ledger overwrites (issue 15 item 2). It stops here, before loading anything.
    m_dataDirLock = DataDirLock::acquire(dataDir(), error);
    if (!m_dataDirLock)
        return false;
    m_cityPath = m_options.cityPath.isEmpty() ? bundledCityPath() : m_options.cityPath;
    if (m_cityPath.isEmpty()) {
        error = QStringLiteral("the bundled city file is missing (reinstall, or pass --city PATH)");
        return false;
    }
    city::CityLoadResult loaded = city::City::load(m_cityPath);
    if (!loaded.city) {
        error = QStringLiteral("cannot load the city: %1").arg(loaded.error);
        return false;
    }
    m_city = std::move(loaded.city);

    m_region = SharedRegion::create(error);
    if (!m_region)
        return false;
    // The fleet backend is chosen here, once: this machine's region, or a cluster node's copy.
    m_nodeOrigin = QRandomGenerator::system()->generate64() | 1;
    m_fleet = openFleetBackend(*m_region, {m_options.fleetUrl, m_options.ledgerUrl, true, m_nodeOrigin}, &error);
    if (!m_fleet)
        return false;
    m_fleet->control().startedMs.store(clock::monotonicMs());
    // Before bookings are restored and workers start: both time trips in simulated seconds.
    m_fleet->control().simSpeed.store(m_options.simSpeed);
    m_fleet->control().pickupTimeoutS.store(m_options.pickupTimeoutS);
    // Workers and the simulator read pricing from the region: published before either starts.
    PricingBoard pricing(m_fleet->pricing());
    pricing.setTariff(m_options.tariff);
    pricing.setDemandRate(m_options.demandRatePerMinute);

    if (!openLedger(error))
        return false;
    if (!setUpOperatorAccess(error))
        return false;

    m_simulator = std::make_unique<FleetSimulator>(*m_fleet, m_city, m_options.seed, m_options.simSpeed);
    m_simulator->setLedger(m_ledger.get());
    m_fleet->initialiseCars(m_options.cars, [this](int) { return m_simulator->randomPoint(); });
    // After the cars are placed: restored bookings put their cars back to work.
    std::vector<BookingSnapshot> unplaced;
    const int restored = restoreFromLedger(*m_fleet, m_ledger->reader(), error, &unplaced);
    if (restored < 0) {
        error = QStringLiteral("cannot read the ledger %1: %2").arg(m_ledger->location(), error);
        return false;
    }
    if (restored > 0) {
        // On stderr too: after an unclean stop the operator looks there first.
        const QString message = QStringLiteral("%1 open bookings restored from the ledger").arg(restored);
        qInfo().noquote() << message;
        EventLog(m_fleet->control()).append("restore", message);
    }
    if (!unplaced.empty())
        endUnplaced(unplaced);
    m_simulationThread = std::make_unique<QThread>();
    m_simulationThread->setObjectName(QStringLiteral("taxicore-sim"));
    m_simulator->moveToThread(m_simulationThread.get());
    m_simulationThread->start();
    if (auto *cluster = dynamic_cast<ClusterFleet *>(m_fleet.get()))
        cluster->setResync([reader = &m_ledger->reader()](ClusterFleet &fleet) { resyncFromLedger(fleet, *reader); });
    if (isClusterFleetUrl(m_options.fleetUrl)) {
        // One simulator and demand generator in a cluster: on the node holding the leader lock.
        m_leaderLease = std::make_unique<LeaderLease>(
            m_options.ledgerUrl, [simulator = m_simulator.get(), fleet = m_fleet.get()](bool leads) {
                EventLog(fleet->control())
                    .append("leader", leads ? QStringLiteral("this node leads the cluster: the simulator and "
                                                             "demand generator run here")
                                            : QStringLiteral("this node no longer leads the cluster"));
                QMetaObject::invokeMethod(simulator, leads ? &FleetSimulator::start : &FleetSimulator::stop,
                                          Qt::QueuedConnection);
            });
    } else {
        QMetaObject::invokeMethod(m_simulator.get(), &FleetSimulator::start, Qt::QueuedConnection);
    }

    m_thread = std::make_unique<PrimaryIoThread>(m_options, *m_fleet, m_city, m_ledger.get(), m_options.limits);
    const PrimaryIoThread::Started started = m_thread->startAndWait();
    if (!started.ok) {
        error = started.error;
        stop(0);
        return false;
    }
    // This node in the cluster's node list; its worker processes answer with the same name.
    QUrl nodeUrl;
    nodeUrl.setScheme(QStringLiteral("http"));
    nodeUrl.setHost(m_options.host);
    nodeUrl.setPort(started.port);
    m_nodeIdentity.url = nodeUrl.toString();
    m_nodeIdentity.name = m_options.nodeName.isEmpty() ? NodeDirectory::defaultName(started.port) : m_options.nodeName;
    startController(started.inProcess);
    RuntimeSettings initial;
    initial.mode = parseMode(m_options.mode).value_or(RuntimeMode::Single);
    initial.workers = m_options.workers;
    initial.threads = m_options.threads;
    initial.policy = parsePolicy(m_options.policy).value_or(DistributionPolicy::RoundRobin);
    const QString refused = applyRuntime(initial);
    if (!refused.isEmpty()) {
        error = refused;
        stop(0);
        return false;
    }
    QUrl url;
    url.setScheme(QStringLiteral("http"));
    url.setHost(m_options.host);
    url.setPort(started.port);
    m_url = url;
    EventLog(m_fleet->control()).append("start", QStringLiteral("serving on port %1").arg(started.port));
    startNodeDirectory();
    return true;
}

void ServerHost::startNodeDirectory()
{
    m_nodes = std::make_shared<NodeDirectory>(m_nodeIdentity, m_options.fleetUrl,
                                              nodeStatusSampler(*m_fleet, m_ledger.get(), m_leaderLease.get()));
    setClusterView(*m_fleet, [nodes = std::weak_ptr<NodeDirectory>(m_nodes)] {
        const auto directory = nodes.lock();
        return directory ? directory->snapshot() : QJsonObject{};
    });
}

QJsonObject ServerHost::clusterNodes() const
{
    return m_nodes ? m_nodes->snapshot() : QJsonObject{};
}

QString ServerHost::dataDir() const
{
    return m_options.dataDir.isEmpty() ? QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)
                                       : m_options.dataDir;
}

bool ServerHost::openLedger(QString &error)
{
    // Before SQLite opens it: another server may hold the same file through another path.
    if (isSqliteLedgerUrl(m_options.ledgerUrl)) {
        m_ledgerFileLock = LedgerFileLock::acquire(ledgerFilePath(dataDir()), error);
        if (!m_ledgerFileLock)
            return false;
    }
    LedgerOptions options;
    options.dataDir = dataDir();
    options.durability = parseLedgerDurability(m_options.durability).value_or(LedgerDurability::Normal);
    options.url = m_options.ledgerUrl;
    // The primary holds a node slot of a shared ledger: the fleet's booking ids are this node's own.
    // A cluster node's fleet takes its ids from the cluster's sequence instead (cluster/ClusterIds),
    // dense across nodes as its copy's booking ring needs.
    options.claimNodeSlot = !isClusterFleetUrl(m_options.fleetUrl);
    Ledger::Opened opened = Ledger::open(options);
    if (!opened.ledger) {
        error = QStringLiteral("cannot open the ledger: %1").arg(opened.error);
        return false;
    }
    m_ledger = std::move(opened.ledger);
    return true;
}

// An open booking whose car is not in this fleet (started with fewer --cars than when it was made)
// can never be served here. Left open in the ledger it would stay "assigned" for good, while its
// rider's cancel found no such booking. Outside a cluster it ends as expired, said once, in the
// log and the event log; in a cluster other nodes may have its car, so it is only said.
void ServerHost::endUnplaced(const std::vector<BookingSnapshot> &unplaced)
{
    int highestCar = 0;
    for (const BookingSnapshot &b : unplaced)
        highestCar = std::max(highestCar, b.carId);
    const auto count = qint64(unplaced.size());
    QString message;
    if (isClusterFleetUrl(m_options.fleetUrl)) {
        message = QStringLiteral("%1 open bookings of the ledger are on cars this node's fleet does not hold "
                                 "(up to car %2, --cars %3): left to the nodes that have them")
                      .arg(count)
                      .arg(highestCar)
                      .arg(m_options.cars);
    } else {
        const int ended = endUnplacedBookings(*m_ledger, unplaced, Ledger::kDefaultWaitMs);
        message = QStringLiteral("%1 open bookings could not be restored (their cars, up to car %2, are not among "
                                 "--cars %3, or hold another booking): %4 of them ended as expired")
                      .arg(count)
                      .arg(highestCar)
                      .arg(m_options.cars)
                      .arg(ended);
    }
    qWarning().noquote() << message;
    EventLog(m_fleet->control()).append("restore", message);
}

bool ServerHost::setUpOperatorAccess(QString &error)
{
    m_adminToken = m_options.adminToken;
    if (m_adminToken.isEmpty())
        m_adminToken = loadOrCreateAdminToken(m_ledger->options().dataDir, error);
    if (m_adminToken.isEmpty())
        return false;
    m_deviceToken = m_options.deviceToken;
    if (m_deviceToken.isEmpty())
        m_deviceToken = loadOrCreateDeviceToken(m_ledger->options().dataDir, error);
    if (m_deviceToken.isEmpty())
        return false;
    // Workers read the same policy from the region (WorkerMain), so every process checks alike.
    publishAccessSettings(m_fleet->control().access, {m_adminToken.toLatin1(), m_deviceToken.toLatin1(),
                                                      m_options.trustLoopback, m_options.bookingRatePerMinute,
                                                      double(m_options.bookingBurst), m_options.openBookingsPerClient});
    setOperatorAccessPolicy({m_adminToken.toLatin1(), m_options.trustLoopback, m_deviceToken.toLatin1()});
    setTrustedProxies(m_options.trustedProxies); // workers get it on their command line
    return true;
}

void ServerHost::startController(const RuntimeController::InProcess &inProcess)
{
    WorkerSupervisor::Settings workers;
    workers.program = QCoreApplication::applicationDirPath() + QStringLiteral("/taxicore-server");
    workers.extraArgs = {QStringLiteral("--city"),
                         m_cityPath,
                         QStringLiteral("--data-dir"),
                         m_ledger->options().dataDir,
                         QStringLiteral("--durability"),
                         m_options.durability,
                         QStringLiteral("--feed-idle-timeout-ms"),
                         QString::number(m_options.feedIdleTimeoutMs),
                         QStringLiteral("--event-loop"),
                         eventLoopName(m_options.eventLoop)};
    for (const QString &range : m_options.trustedProxies.toStrings())
        workers.extraArgs << QStringLiteral("--trusted-proxy") << range;
    if (!m_options.ledgerUrl.isEmpty()) // workers append to the same ledger as the primary
        workers.extraArgs << QStringLiteral("--ledger") << m_options.ledgerUrl;
    // ... and only to the very files it opened (fixed while it holds them open: SQLite removes the
    // -wal and -shm when its last connection closes, and the primary's stays open).
    if (const QString files = m_ledger->fileFingerprint(); !files.isEmpty())
        workers.extraArgs << QStringLiteral("--ledger-files") << files;
    if (!m_options.fleetUrl.isEmpty()) // and, on a cluster node, publish on its feed under its name
        workers.extraArgs << QStringLiteral("--fleet") << m_options.fleetUrl << QStringLiteral("--node-origin")
                          << QString::number(m_nodeOrigin);
    workers.extraArgs << QStringLiteral("--node-name") << m_nodeIdentity.name << QStringLiteral("--node-url")
                      << m_nodeIdentity.url;
    workers.regionFd = m_region->fd();
    workers.heartbeatTimeoutMs = m_options.heartbeatTimeoutMs;
    workers.workerConnections = m_options.workerConnections;
    workers.limits = m_options.limits;
    m_controlThread = std::make_unique<QThread>();
    m_controlThread->setObjectName(QStringLiteral("taxicore-control"));
    m_controller = std::make_unique<RuntimeController>(*m_fleet, inProcess, workers, m_ledger.get());
    m_controller->moveToThread(m_controlThread.get());
    m_controlThread->start();
}

QString ServerHost::applyRuntime(const RuntimeSettings &settings)
{
    if (!m_fleet)
        return QStringLiteral("the server is not running");
    // The console's change waits its turn behind one an operator is applying over HTTP.
    QDeadlineTimer deadline(kRuntimeApplyTimeoutMs);
    RuntimeMailbox::Answer answer;
    for (;;) {
        answer = RuntimeMailbox(m_fleet->control()).ask(settings, int(std::max<qint64>(1, deadline.remainingTime())));
        if (!answer.busy || deadline.hasExpired())
            break;
        QThread::msleep(kBusyRetryMs);
    }
    if (answer.busy)
        return QStringLiteral("another runtime change is still being applied");
    if (!answer.answered)
        return QStringLiteral("the runtime controller did not answer within %1 s").arg(kRuntimeApplyTimeoutMs / 1000);
    return answer.error;
}

RuntimeSettings ServerHost::runtime() const
{
    return m_fleet ? RuntimeMailbox(m_fleet->control()).current() : RuntimeSettings{};
}

void ServerHost::stop(int graceMs)
{
    // Draining starts now: refuse new clients (instead of letting the kernel accept them and
    // resetting them at exit), in the primary and in the workers, before anything waits.
    if (m_thread)
        m_thread->closeListeners();
    if (m_controller) {
        // Workers drain first (their connections finish), then the in-process server.
        QMetaObject::invokeMethod(
            m_controller.get(), [c = m_controller.get(), graceMs] { c->shutdown(graceMs); },
            Qt::BlockingQueuedConnection);
        m_controlThread->quit();
        m_controlThread->wait();
        m_controller.reset();
        m_controlThread.reset();
    }
    if (m_thread) {
        m_thread->drainAndStop(graceMs);
        m_thread.reset();
    }
    if (m_nodes) { // before the lease and the ledger it samples; its entry leaves the directory
        setClusterView(*m_fleet, {});
        m_nodes.reset();
    }
    m_leaderLease.reset(); // another node leads from now on
    if (auto *cluster = dynamic_cast<ClusterFleet *>(m_fleet.get()))
        cluster->setResync({}); // it reads the ledger, which closes below
    // Before the ledger closes: the simulator records arrivals and generated rides in it.
    if (m_simulationThread) {
        // Its timer belongs to the simulation thread and must be stopped there.
        QMetaObject::invokeMethod(m_simulator.get(), &FleetSimulator::stop, Qt::BlockingQueuedConnection);
        m_simulationThread->quit();
        m_simulationThread->wait();
        m_simulator.reset();
        m_simulationThread.reset();
    }
    m_ledger.reset();         // commits what is queued, then closes
    m_ledgerFileLock.reset(); // the ledger is closed: SQLite's own locks are gone with it
    m_dataDirLock.reset();    // last: another server may take the directory
}

void ServerHost::setTariff(const Tariff &tariff)
{
    m_options.tariff = tariff;
    if (m_fleet)
        PricingBoard(m_fleet->pricing()).setTariff(tariff);
}

Tariff ServerHost::tariff() const
{
    return m_fleet ? PricingBoard(m_fleet->pricing()).tariff() : m_options.tariff;
}

void ServerHost::setDemandRate(double ridesPerMinute)
{
    m_options.demandRatePerMinute = std::max(0.0, ridesPerMinute);
    if (m_fleet)
        PricingBoard(m_fleet->pricing()).setDemandRate(ridesPerMinute);
}

double ServerHost::demandRate() const
{
    return m_fleet ? PricingBoard(m_fleet->pricing()).demandRate() : m_options.demandRatePerMinute;
}

QUrl ServerHost::url() const
{
    return m_url;
}

QString ServerHost::mode() const
{
    return modeName(runtime().mode);
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
