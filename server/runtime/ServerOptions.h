#pragma once

#include "wire/ConnectionLimits.h"

#include "http/ClientAddress.h"

#include "eventloop/EventLoopKind.h"

#include "pricing/Tariff.h"
#include "region/WorkerProtocol.h"

#include <QString>
#include <QStringList>

class QCommandLineParser;

namespace taxicore {

// Everything a server is started with; shared by taxicore-server and the console (same flags).
struct ServerOptions {
    QString host = QStringLiteral("127.0.0.1");
    quint16 port = 8080;
    QString mode = QStringLiteral("single"); // single | pool | processes
    int cars = 500;
    quint64 seed = 1;
    double simSpeed = 1.0;    // simulated seconds per real second
    int pickupTimeoutS = 600; // --pickup-timeout: simulated seconds an unboarded booking holds its car
    QString dataDir;          // empty: QStandardPaths::AppDataLocation
    QString durability = QStringLiteral("normal"); // normal | full (the ledger's synchronous level)
    QString ledgerUrl; // --ledger: empty = the SQLite file in dataDir; postgresql://... = a shared PostgreSQL
    QString cityPath;  // empty: the bundled city
    QString fleetUrl;  // --fleet: empty (this machine's shared memory) or redis://host:port (a cluster node)
    QString nodeName;  // --node-name: this node in the cluster's node list; empty = <hostname>:<port>
    int workers = 0;   // processes mode; 0 = number of cores
    int threads = 0;   // pool mode; 0 = number of cores
    QString policy = QStringLiteral("round-robin");     // round-robin | least-loaded | kernel
    int workerConnections = kMaxConnectionsPerWorker;   // --worker-connections: per worker, at once
    int heartbeatTimeoutMs = kWorkerHeartbeatTimeoutMs; // a worker silent this long is replaced
    QString tariffPath;                                 // --tariff FILE; empty: the built-in tariff
    Tariff tariff;                                      // read from tariffPath by readServerOptions
    double demandRatePerMinute = 0;                     // --demand-rate: generated rides per minute, 0 = off
    ConnectionLimits limits;          // --max-request-line ... --max-connections (docs/reference/limits.md)
    QString adminToken;               // empty: $TAXICORE_ADMIN_TOKEN, else DATA_DIR/admin-token (made at first start)
    QString deviceToken;              // empty: $TAXICORE_DEVICE_TOKEN, else DATA_DIR/device-token (made at first start)
    bool trustLoopback = true;        // loopback clients are operators without a token, and not rate limited
    double bookingRatePerMinute = 60; // POST /api/v1/bookings per client (peer address)
    int bookingBurst = 20;
    int openBookingsPerClient = 10; // --open-bookings-per-client; 0: no limit
    int feedIdleTimeoutMs = 30'000; // --feed-idle-timeout-ms: a feed client that does not subscribe is closed
    TrustedProxies trustedProxies;  // --trusted-proxy: whose X-Forwarded-For names the client (none)
    EventLoopKind eventLoop = defaultEventLoop(); // --event-loop: the I/O thread's and workers' dispatcher
};

// Adds the server flags (--host, --port, --mode, --cars, --seed, ...) to a parser.
void addServerOptions(QCommandLineParser &parser);

// Reads the flags back; returns false with a message naming the bad flag (or the first argument
// that is no flag: the server takes none).
bool readServerOptions(const QCommandLineParser &parser, ServerOptions &options, QString &error);

// The connection-limit flags alone (worker processes read just these); false names the bad flag.
bool readConnectionLimits(const QCommandLineParser &parser, ConnectionLimits &limits, QString &error);
// The same limits as flags, for starting a worker process with what the primary was given.
QStringList connectionLimitArguments(const ConnectionLimits &limits);
// --feed-idle-timeout-ms alone (workers read it too); false names the bad flag.
bool readFeedIdleTimeout(const QCommandLineParser &parser, int &ms, QString &error);
// --trusted-proxy alone (workers read it too); false names the bad entry.
bool readTrustedProxies(const QCommandLineParser &parser, TrustedProxies &proxies, QString &error);

} // namespace taxicore
