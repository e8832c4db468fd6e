#pragma once

#include "cluster/NodeDirectory.h"
#include "runtime/RuntimeController.h"
#include "control/RuntimeSettings.h"
#include "runtime/ServerOptions.h"

#include <QJsonObject>
#include <QObject>
#include <QThread>
#include <QUrl>
#include <memory>
#include <vector>

namespace taxicore::city {
class City;
}

namespace taxicore {

class FleetSimulator;
class Ledger;
class FleetStore;
struct BookingSnapshot;
class DataDirLock;
class LedgerFileLock;
class LeaderLease;
class PrimaryIoThread;
class SharedRegion;

// Runs the taxi HTTP service on its own I/O thread (never the caller's thread), over a shared
// memory region holding the fleet, bookings and metrics. Used by taxicore-server and the console.
class ServerHost : public QObject {
    Q_OBJECT
public:
    explicit ServerHost(ServerOptions options, QObject *parent = nullptr);
    ~ServerHost() override;

    // Binds and starts serving; false with a message (port in use, bad host, ...) on failure.
    bool start(QString &error);
    // Stops accepting, lets in-flight requests finish (up to graceMs), then stops the I/O thread.
    void stop(int graceMs = 5000);

    // Switches mode, workers, threads or policy while serving (any thread; waits at most
    // kRuntimeApplyTimeoutMs, region/WorkerProtocol.h, for the controller). Empty on success,
    // else why not.
    QString applyRuntime(const RuntimeSettings &settings);
    RuntimeSettings runtime() const;

    QUrl url() const;
    QString mode() const;
    quint64 requestsServed() const;
    FleetStore &fleet() const;
    // The loaded street network (null before start()).
    std::shared_ptr<const city::City> city() const { return m_city; }
    const ServerOptions &options() const { return m_options; }
    // The tariff of quotes and fares, the same in every process (it lives in the shared region);
    // takes effect for the next quote. Any thread; before start() it sets what start() publishes.
    void setTariff(const Tariff &tariff);
    Tariff tariff() const;
    // Rides per minute the demand generator books (0 = off). Any thread, like setTariff().
    void setDemandRate(double ridesPerMinute);
    double demandRate() const;
    // The bearer token of /admin/* (from --admin-token, or DATA_DIR/admin-token); empty before start().
    QString adminToken() const { return m_adminToken; }
    // The bearer token of car position reports (--device-token, or DATA_DIR/device-token).
    QString deviceToken() const { return m_deviceToken; }
    // This process's ledger (null before start()): the console reads reports and records events.
    Ledger *ledger() const { return m_ledger.get(); }
    // The nodes of this server's cluster as GET /admin/v1/cluster answers them ({"cluster": false,
    // "nodes": [this one]} outside a cluster; empty before start()). Never blocks on Redis.
    QJsonObject clusterNodes() const;

private:
    QString dataDir() const; // --data-dir, else the user's app data location
    bool openLedger(QString &error);
    // Open bookings of the ledger the fleet could not take back at start (restoreFromLedger).
    void endUnplaced(const std::vector<BookingSnapshot> &unplaced);
    bool setUpOperatorAccess(QString &error);
    void startController(const RuntimeController::InProcess &inProcess);
    void startNodeDirectory();

    ServerOptions m_options;
    QString m_cityPath;
    std::shared_ptr<const city::City> m_city;
    std::unique_ptr<DataDirLock> m_dataDirLock;       // held from start() to the end of stop()
    std::unique_ptr<LedgerFileLock> m_ledgerFileLock; // the SQLite ledger's file, while the ledger is open
    std::unique_ptr<SharedRegion> m_region;
    std::unique_ptr<Ledger> m_ledger;
    std::unique_ptr<FleetStore> m_fleet;
    std::unique_ptr<FleetSimulator> m_simulator;
    std::unique_ptr<LeaderLease> m_leaderLease; // a cluster node: runs the simulator while it leads
    quint64 m_nodeOrigin = 0;                   // names this node on a cluster's feed
    std::shared_ptr<NodeDirectory> m_nodes;     // this node's heartbeat and the cluster's node list
    NodeDirectory::Identity m_nodeIdentity;     // its name and address there
    std::unique_ptr<QThread> m_simulationThread;
    std::unique_ptr<PrimaryIoThread> m_thread;
    std::unique_ptr<QThread> m_controlThread;
    std::unique_ptr<RuntimeController> m_controller;
    QUrl m_url;
    QString m_adminToken;
    QString m_deviceToken;
};

} // namespace taxicore
