#include "runtime/ServerOptions.h"

#include "region/RegionLayout.h"
#include "runtime/AdminTokenFile.h"
#include "runtime/PricingOptions.h"
#include "control/RuntimeSettings.h"

#include <QCommandLineParser>
#include <QHostAddress>
#include <QRegularExpression>

namespace taxicore {

namespace {

// The longest --pickup-timeout accepted: a week of simulated time.
constexpr int kMaxPickupTimeoutS = 7 * 24 * 3600;

// One connection-limit flag: its name, what it means, and where its value lives. The defaults are
// ConnectionLimits' own, so they are written down in one place.
struct LimitFlag {
    const char *name;
    const char *help;
    int min;
    int max;
    long long ConnectionLimits::*wide = nullptr; // the one 64-bit field (body bytes)
    int ConnectionLimits::*field = nullptr;
};

const LimitFlag kLimitFlags[] = {
    {"max-request-line", "Longest request line in bytes; longer gets 414", 64, 1 << 20, nullptr,
     &ConnectionLimits::maxRequestLineBytes},
    {"max-header-bytes", "Largest request head in bytes; larger gets 431", 256, 16 << 20, nullptr,
     &ConnectionLimits::maxHeaderBytes},
    {"max-header-fields", "Most header fields in a request; more gets 431", 1, 10'000, nullptr,
     &ConnectionLimits::maxHeaderFields},
    {"max-body-bytes", "Largest request body in bytes; larger gets 413", 0, 1 << 30, &ConnectionLimits::maxBodyBytes,
     nullptr},
    {"header-timeout-ms",
     "Milliseconds a request head, and then its body, may each take to arrive before the connection is closed", 100,
     3'600'000, nullptr, &ConnectionLimits::headerTimeoutMs},
    {"idle-timeout-ms", "Milliseconds an idle keep-alive connection is kept open", 100, 3'600'000, nullptr,
     &ConnectionLimits::idleTimeoutMs},
    {"max-connections", "Open connections per process; over it gets 503 and close", 1, 1'000'000, nullptr,
     &ConnectionLimits::maxConnections},
    {"max-connections-per-client",
     "Open connections one client address may hold on this machine (every process), 0 for no cap; over it gets 429 "
     "and close (trusted loopback and --trusted-proxy peers are not capped)",
     0, 65535, nullptr, &ConnectionLimits::maxConnectionsPerClient},
    {"drain-grace-ms", "Milliseconds idle connections stay open while the server drains", 0, 600'000, nullptr,
     &ConnectionLimits::drainGraceMs},
    {"max-pending-output", "Unsent answer bytes per connection above which it is not read until they drain", 4096,
     1 << 30, nullptr, &ConnectionLimits::maxPendingOutputBytes},
    {"max-pipelined", "Unanswered requests per connection at which it is not read until one is answered", 1, 1024,
     nullptr, &ConnectionLimits::maxPipelined},
    {"answer-timeout-ms",
     "Milliseconds a request may wait for its answer (a booking for its commit) before it gets 503 answer_timeout "
     "and its connection closes",
     1000, 3'600'000, nullptr, &ConnectionLimits::answerTimeoutMs},
};

long long limitValue(const ConnectionLimits &limits, const LimitFlag &flag)
{
    return flag.wide ? limits.*flag.wide : limits.*flag.field;
}

void addConnectionLimitOptions(QCommandLineParser &parser)
{
    const ConnectionLimits defaults;
    for (const LimitFlag &flag : kLimitFlags) {
        const QString value = QString::number(limitValue(defaults, flag));
        parser.addOption({QString::fromLatin1(flag.name),
                          QStringLiteral("%1 (default %2).").arg(QLatin1StringView(flag.help), value),
                          QStringLiteral("n"), value});
    }
}

} // namespace

void addServerOptions(QCommandLineParser &parser)
{
    parser.addOptions({
        {QStringLiteral("host"), QStringLiteral("Address to listen on (default 127.0.0.1)."), QStringLiteral("address"),
         QStringLiteral("127.0.0.1")},
        {QStringLiteral("port"), QStringLiteral("TCP port; 0 picks a free one (default 8080)."), QStringLiteral("port"),
         QStringLiteral("8080")},
        {QStringLiteral("mode"), QStringLiteral("Execution model: single | pool | processes (default single)."),
         QStringLiteral("mode"), QStringLiteral("single")},
        {QStringLiteral("cars"), QStringLiteral("Simulated cars (default 500, at most %1).").arg(kMaxCars),
         QStringLiteral("n"), QStringLiteral("500")},
        {QStringLiteral("seed"), QStringLiteral("Seed of the simulation (default 1)."), QStringLiteral("n"),
         QStringLiteral("1")},
        {QStringLiteral("sim-speed"), QStringLiteral("Simulated time per real second (default 1)."),
         QStringLiteral("factor"), QStringLiteral("1")},
        {QStringLiteral("pickup-timeout"),
         QStringLiteral("Simulated seconds a booking may wait for its rider to board before it expires and "
                        "its car is freed (default 600)."),
         QStringLiteral("seconds"), QStringLiteral("600")},
        {QStringLiteral("data-dir"),
         QStringLiteral("Directory for the ledger and settings (default: the app data location)."),
         QStringLiteral("dir")},
        {QStringLiteral("durability"),
         QStringLiteral("Ledger commits: normal (survives a crash) | full (survives power loss)."),
         QStringLiteral("level"), QStringLiteral("normal")},
        {QStringLiteral("ledger"),
         QStringLiteral("Where bookings are kept: empty or sqlite: for the SQLite file in the data directory, "
                        "postgresql://user@host:port/db for a PostgreSQL shared by the nodes of a cluster."),
         QStringLiteral("url")},
        {QStringLiteral("city"), QStringLiteral("City file to load instead of the bundled one."),
         QStringLiteral("path")},
        {QStringLiteral("fleet"),
         QStringLiteral("Where the fleet lives: shm: (this machine, the default) or redis://host:port[/db] "
                        "for a node of a cluster (needs --ledger postgresql://...; docs/cluster.md)."),
         QStringLiteral("url")},
        {QStringLiteral("node-name"),
         QStringLiteral("This node's name in the cluster's node list (GET /admin/v1/cluster, the console's Server "
                        "panel): 1 to 64 of A-Z a-z 0-9 . _ : @ - (default <hostname>:<port>)."),
         QStringLiteral("name")},
        {QStringLiteral("workers"), QStringLiteral("Worker processes in processes mode (default: cores)."),
         QStringLiteral("n"), QStringLiteral("0")},
        {QStringLiteral("threads"), QStringLiteral("Handler threads in pool mode (default: cores)."),
         QStringLiteral("n"), QStringLiteral("0")},
        {QStringLiteral("policy"),
         QStringLiteral("Connection distribution in processes mode: round-robin | least-loaded | kernel."),
         QStringLiteral("policy"), QStringLiteral("round-robin")},
        {QStringLiteral("worker-connections"),
         QStringLiteral("Most connections one worker serves at once; more wait for room, oldest first (default %1).")
             .arg(kMaxConnectionsPerWorker),
         QStringLiteral("n"), QString::number(kMaxConnectionsPerWorker)},
        {QStringLiteral("heartbeat-timeout"),
         QStringLiteral("Milliseconds a worker's event loop may stay silent before it is replaced (default %1).")
             .arg(kWorkerHeartbeatTimeoutMs),
         QStringLiteral("ms"), QString::number(kWorkerHeartbeatTimeoutMs)},
        {QStringLiteral("admin-token"),
         QStringLiteral("Bearer token for /admin/* (default: $TAXICORE_ADMIN_TOKEN, else DATA_DIR/admin-token)."),
         QStringLiteral("token")},
        {QStringLiteral("device-token"),
         QStringLiteral(
             "Bearer token of car position reports (default: $TAXICORE_DEVICE_TOKEN, else DATA_DIR/device-token)."),
         QStringLiteral("token")},
        {QStringLiteral("trust-loopback"),
         QStringLiteral("on: loopback clients need no admin token and are not rate limited; off behind a local reverse "
                        "proxy (default on)."),
         QStringLiteral("on|off"), QStringLiteral("on")},
        {QStringLiteral("booking-rate"), QStringLiteral("Bookings a client may create per minute (default 60)."),
         QStringLiteral("per-minute"), QStringLiteral("60")},
        {QStringLiteral("booking-burst"), QStringLiteral("Bookings a client may create at once (default 20)."),
         QStringLiteral("n"), QStringLiteral("20")},
        {QStringLiteral("open-bookings-per-client"),
         QStringLiteral("Bookings a client may hold open at once, 0 for no limit (default 10, at most 32)."),
         QStringLiteral("n"), QStringLiteral("10")},
        {QStringLiteral("feed-idle-timeout-ms"),
         QStringLiteral("Milliseconds a live-feed WebSocket may stay open without subscribing (default 30000)."),
         QStringLiteral("ms"), QStringLiteral("30000")},
        {QStringLiteral("trusted-proxy"),
         QStringLiteral("Reverse proxy address or CIDR range whose X-Forwarded-For names the client (rate limit, "
                        "loopback trust); repeatable or comma-separated, IPv4 or IPv6 (default none)."),
         QStringLiteral("cidr")},
        {QStringLiteral("event-loop"),
         QStringLiteral("Event dispatcher of the server's I/O thread and worker processes: qt (Qt's, poll() over every "
                        "socket) | epoll (the ready sockets only) (default %1).")
             .arg(eventLoopName(defaultEventLoop())),
         QStringLiteral("qt|epoll"), eventLoopName(defaultEventLoop())},
    });
    addConnectionLimitOptions(parser);
    addPricingOptions(parser);
}

namespace {

bool readInt(const QCommandLineParser &parser, const char *name, int min, int max, int &out, QString &error)
{
    bool ok = false;
    const int value = parser.value(QString::fromLatin1(name)).toInt(&ok);
    if (!ok || value < min || value > max) {
        error = QStringLiteral("--%1 must be a whole number from %2 to %3, not \"%4\"")
                    .arg(QLatin1StringView(name))
                    .arg(min)
                    .arg(max)
                    .arg(parser.value(QString::fromLatin1(name)));
        return false;
    }
    out = value;
    return true;
}

} // namespace

namespace {

// --admin-token, --device-token, --trust-loopback, --booking-rate, --booking-burst (issue 9:
// operator access; issue 15: device token).
bool readAccessOptions(const QCommandLineParser &parser, ServerOptions &options, QString &error)
{
    // The flag, else its environment variable; an error names the one the value came from.
    const auto readToken = [&](const QString &flag, const char *variable, QString &token) {
        token = parser.value(flag);
        QString source = QStringLiteral("--") + flag;
        if (token.isEmpty()) {
            token = qEnvironmentVariable(variable);
            source = QString::fromLatin1(variable);
        }
        if (!token.isEmpty() && !isWellFormedToken(token)) {
            error = QStringLiteral("%1 must be %2").arg(source, QLatin1StringView(kTokenRule));
            return false;
        }
        return true;
    };
    if (!readToken(QStringLiteral("admin-token"), "TAXICORE_ADMIN_TOKEN", options.adminToken)
        || !readToken(QStringLiteral("device-token"), "TAXICORE_DEVICE_TOKEN", options.deviceToken))
        return false;
    const QString trust = parser.value(QStringLiteral("trust-loopback"));
    if (trust != QStringLiteral("on") && trust != QStringLiteral("off")) {
        error = QStringLiteral("--trust-loopback must be on or off, not \"%1\"").arg(trust);
        return false;
    }
    options.trustLoopback = trust == QStringLiteral("on");
    bool ok = false;
    options.bookingRatePerMinute = parser.value(QStringLiteral("booking-rate")).toDouble(&ok);
    if (!ok || !(options.bookingRatePerMinute > 0) || options.bookingRatePerMinute > 1'000'000) {
        error = QStringLiteral("--booking-rate must be a number above 0 and at most 1000000 (per minute)");
        return false;
    }
    return readInt(parser, "booking-burst", 1, 1'000'000, options.bookingBurst, error)
           && readInt(parser, "open-bookings-per-client", 0, kMaxOpenBookingsPerClient, options.openBookingsPerClient,
                      error);
}

} // namespace

bool readServerOptions(const QCommandLineParser &parser, ServerOptions &options, QString &error)
{
    // Neither program takes a word that is not a flag: it is a value whose flag was mistyped or
    // left out, and starting without what the operator meant is worse than not starting.
    if (!parser.positionalArguments().isEmpty()) {
        error = QStringLiteral("unexpected argument \"%1\" (flags start with --)")
                    .arg(parser.positionalArguments().constFirst());
        return false;
    }
    options.host = parser.value(QStringLiteral("host"));
    if (QHostAddress(options.host).isNull() && options.host != QStringLiteral("localhost")) {
        error = QStringLiteral("--host must be an IP address, not \"%1\"").arg(options.host);
        return false;
    }
    int port = 0;
    if (!readInt(parser, "port", 0, 65535, port, error) || !readInt(parser, "cars", 0, kMaxCars, options.cars, error)
        || !readInt(parser, "workers", 0, kMaxWorkerProcesses, options.workers, error)
        || !readInt(parser, "threads", 0, 256, options.threads, error)
        || !readInt(parser, "heartbeat-timeout", 200, 3'600'000, options.heartbeatTimeoutMs, error)
        || !readInt(parser, "worker-connections", 1, kMaxConnectionsPerWorker, options.workerConnections, error)
        || !readInt(parser, "pickup-timeout", 1, kMaxPickupTimeoutS, options.pickupTimeoutS, error))
        return false;
    options.port = quint16(port);
    bool ok = false;
    options.seed = parser.value(QStringLiteral("seed")).toULongLong(&ok);
    if (!ok) {
        error = QStringLiteral("--seed must be a whole number");
        return false;
    }
    options.simSpeed = parser.value(QStringLiteral("sim-speed")).toDouble(&ok);
    if (!ok || !(options.simSpeed > 0) || options.simSpeed > 1000) { // NaN is neither: refused too
        error = QStringLiteral("--sim-speed must be a number above 0 and at most 1000");
        return false;
    }
    options.mode = parser.value(QStringLiteral("mode"));
    if (!parseMode(options.mode)) {
        error = QStringLiteral("--mode must be single, pool or processes, not \"%1\"").arg(options.mode);
        return false;
    }
    options.policy = parser.value(QStringLiteral("policy"));
    if (!parsePolicy(options.policy)) {
        error = QStringLiteral("--policy must be round-robin, least-loaded or kernel, not \"%1\"").arg(options.policy);
        return false;
    }
    options.durability = parser.value(QStringLiteral("durability"));
    if (options.durability != QStringLiteral("normal") && options.durability != QStringLiteral("full")) {
        error = QStringLiteral("--durability must be normal or full, not \"%1\"").arg(options.durability);
        return false;
    }
    if (!readAccessOptions(parser, options, error))
        return false;
    if (!readPricingOptions(parser, options, error))
        return false;
    if (!readFeedIdleTimeout(parser, options.feedIdleTimeoutMs, error)
        || !readTrustedProxies(parser, options.trustedProxies, error))
        return false;
    const QString eventLoop = parser.value(QStringLiteral("event-loop"));
    if (const auto kind = parseEventLoop(eventLoop)) {
        options.eventLoop = *kind;
    } else {
        error = QStringLiteral("--event-loop must be qt or epoll, not \"%1\"").arg(eventLoop);
        return false;
    }
    options.dataDir = parser.value(QStringLiteral("data-dir"));
    options.ledgerUrl = parser.value(QStringLiteral("ledger"));
    if (!options.ledgerUrl.isEmpty() && options.ledgerUrl != QStringLiteral("sqlite:")
        && !options.ledgerUrl.startsWith(QStringLiteral("postgresql://"))
        && !options.ledgerUrl.startsWith(QStringLiteral("postgres://"))) {
        // Only the scheme: the rest may hold a password.
        error = QStringLiteral("--ledger must be sqlite: or a postgresql:// URL, not \"%1:...\"")
                    .arg(options.ledgerUrl.section(u':', 0, 0));
        return false;
    }
    options.cityPath = parser.value(QStringLiteral("city"));
    options.fleetUrl = parser.value(QStringLiteral("fleet"));
    options.nodeName = parser.value(QStringLiteral("node-name"));
    static const QRegularExpression nodeNameChars(QStringLiteral("^[A-Za-z0-9._:@-]{1,64}$"));
    if (parser.isSet(QStringLiteral("node-name")) && !nodeNameChars.match(options.nodeName).hasMatch()) {
        error = QStringLiteral("--node-name must be 1 to 64 characters of A-Z a-z 0-9 . _ : @ -, not \"%1\"")
                    .arg(options.nodeName);
        return false;
    }
    return readConnectionLimits(parser, options.limits, error);
}

bool readConnectionLimits(const QCommandLineParser &parser, ConnectionLimits &limits, QString &error)
{
    for (const LimitFlag &flag : kLimitFlags) {
        int value = 0;
        if (!readInt(parser, flag.name, flag.min, flag.max, value, error))
            return false;
        if (flag.wide)
            limits.*flag.wide = value;
        else
            limits.*flag.field = value;
    }
    return true;
}

bool readFeedIdleTimeout(const QCommandLineParser &parser, int &ms, QString &error)
{
    return readInt(parser, "feed-idle-timeout-ms", 100, 3'600'000, ms, error);
}

bool readTrustedProxies(const QCommandLineParser &parser, TrustedProxies &proxies, QString &error)
{
    for (const QString &value : parser.values(QStringLiteral("trusted-proxy")))
        if (!proxies.add(value, error))
            return false;
    return true;
}

QStringList connectionLimitArguments(const ConnectionLimits &limits)
{
    QStringList args;
    for (const LimitFlag &flag : kLimitFlags)
        args << QStringLiteral("--%1").arg(QLatin1StringView(flag.name)) << QString::number(limitValue(limits, flag));
    return args;
}

} // namespace taxicore
