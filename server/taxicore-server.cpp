// taxicore-server: the taxi service without the console (headless, or as a systemd service).

#include "eventloop/EventLoopKind.h"
#include "runtime/FileLimit.h"
#include "runtime/ServerHost.h"
#include "runtime/ServerOptions.h"
#include "runtime/UnixSignalWatcher.h"
#include "runtime/WorkerMain.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <cstdio>
#include <exception>
#include <new>
#include <system_error>

namespace {
constexpr int kShutdownGraceMs = 5000;

// An exception nothing else caught (a thread the system would not make, memory it would not give),
// as one line instead of std::terminate's abort. Both usually mean a limit set too low for the
// server's thread stacks and mappings: say which.
QString describeFailure(const std::exception &e)
{
    QString text = QString::fromLocal8Bit(e.what());
    const auto *system = dynamic_cast<const std::system_error *>(&e);
    if (system && system->code() == std::errc::resource_unavailable_try_again)
        text += QStringLiteral(" (no thread could be made: a memory limit such as ulimit -v, or a process limit "
                               "such as ulimit -u, may be too low)");
    else if (dynamic_cast<const std::bad_alloc *>(&e))
        text += QStringLiteral(" (out of memory: a memory limit such as ulimit -v may be too low)");
    return text;
}

int run(int argc, char *argv[])
{
    // Qt's plain poll() event dispatcher instead of glib's: both look at every open socket on
    // every loop iteration, but glib's costs about twice as much per socket, and with thousands of
    // held connections that cost is what each request waits for (docs/benchmarks.md §3). Workers inherit it.
    if (!qEnvironmentVariableIsSet("QT_NO_GLIB"))
        qputenv("QT_NO_GLIB", "1");
    // --event-loop epoll: the main thread's dispatcher must exist before the application object,
    // which would create Qt's. This thread is the loop of a worker process; the primary's I/O
    // thread gets its own in PrimaryIoThread. The parser below rejects a bad value.
    if (QAbstractEventDispatcher *dispatcher =
            taxicore::createEventDispatcher(taxicore::eventLoopFromArguments(argc, argv)))
        QCoreApplication::setEventDispatcher(dispatcher);
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("taxicore-server"));
    QCoreApplication::setOrganizationName(QStringLiteral("TaxiCore"));
    QCoreApplication::setApplicationVersion(QStringLiteral(TAXICORE_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("TaxiCore taxi-booking HTTP server (headless)."));
    parser.addHelpOption();
    parser.addVersionOption();
    taxicore::addServerOptions(parser);
    // Internal: the primary starts its worker processes with these.
    QCommandLineOption workerOption(QStringLiteral("worker"), QStringLiteral("Run as a worker process (internal)."));
    QCommandLineOption workerIndexOption(QStringLiteral("worker-index"), QStringLiteral("Worker slot (internal)."),
                                         QStringLiteral("n"), QStringLiteral("1"));
    QCommandLineOption nodeOriginOption(QStringLiteral("node-origin"),
                                        QStringLiteral("The cluster node's name on its feed (internal)."),
                                        QStringLiteral("n"), QStringLiteral("0"));
    QCommandLineOption nodeUrlOption(QStringLiteral("node-url"),
                                     QStringLiteral("The node's address in the node list (internal)."),
                                     QStringLiteral("url"));
    QCommandLineOption ledgerFilesOption(QStringLiteral("ledger-files"),
                                         QStringLiteral("The primary's ledger files, device:inode (internal)."),
                                         QStringLiteral("ids"));
    ledgerFilesOption.setFlags(QCommandLineOption::HiddenFromHelp);
    nodeUrlOption.setFlags(QCommandLineOption::HiddenFromHelp);
    workerOption.setFlags(QCommandLineOption::HiddenFromHelp);
    workerIndexOption.setFlags(QCommandLineOption::HiddenFromHelp);
    nodeOriginOption.setFlags(QCommandLineOption::HiddenFromHelp);
    parser.addOption(workerOption);
    parser.addOption(workerIndexOption);
    parser.addOption(nodeOriginOption);
    parser.addOption(nodeUrlOption);
    parser.addOption(ledgerFilesOption);
    // An unknown flag or a missing value is a bad command line like a bad value: status 2 (process()
    // alone would exit 1, the status of a server that cannot start). process() then does --help, --version.
    if (!parser.parse(QCoreApplication::arguments())) {
        std::fprintf(stderr, "taxicore-server: %s\nRun 'taxicore-server --help' for the flags.\n",
                     qPrintable(parser.errorText()));
        return 2;
    }
    parser.process(app);
    QString error;
    if (parser.isSet(workerOption)) {
        taxicore::ConnectionLimits limits;
        int feedIdleTimeoutMs = 0;
        taxicore::TrustedProxies proxies;
        if (!taxicore::readConnectionLimits(parser, limits, error)
            || !taxicore::readFeedIdleTimeout(parser, feedIdleTimeoutMs, error)
            || !taxicore::readTrustedProxies(parser, proxies, error)) {
            std::fprintf(stderr, "taxicore-server worker: %s\n", qPrintable(error));
            return 2;
        }
        taxicore::setTrustedProxies(std::move(proxies)); // before it serves: read-only from then on
        taxicore::WorkerOptions worker;
        worker.index = parser.value(workerIndexOption).toInt();
        worker.cityPath = parser.value(QStringLiteral("city"));
        worker.dataDir = parser.value(QStringLiteral("data-dir"));
        worker.durability = parser.value(QStringLiteral("durability"));
        worker.ledgerUrl = parser.value(QStringLiteral("ledger"));
        worker.ledgerFiles = parser.value(ledgerFilesOption);
        worker.fleetUrl = parser.value(QStringLiteral("fleet"));
        worker.nodeOrigin = parser.value(nodeOriginOption).toULongLong();
        worker.nodeName = parser.value(QStringLiteral("node-name"));
        worker.nodeUrl = parser.value(nodeUrlOption);
        worker.limits = limits;
        worker.feedIdleTimeoutMs = feedIdleTimeoutMs;
        return taxicore::runWorker(worker);
    }

    taxicore::ServerOptions options;
    if (!taxicore::readServerOptions(parser, options, error)) {
        std::fprintf(stderr, "taxicore-server: %s\n", qPrintable(error));
        return 2;
    }
    // Before anything opens a descriptor worth counting; worker processes inherit the raised limit.
    taxicore::raiseFileLimitAndReport("taxicore-server", options.limits.maxConnections);

    // Installed before the start, which may block (a slow disk, a database): a signal meanwhile
    // ends the process at once; from setServing() on it drains.
    taxicore::UnixSignalWatcher signalWatcher;
    taxicore::ServerHost host(options);
    bool started = false;
    try {
        started = host.start(error);
    } catch (const std::exception &e) {
        // Like any failed start: what start() set up is taken down by ~ServerHost (stop).
        error = QStringLiteral("cannot start: %1").arg(describeFailure(e));
    }
    if (!started) {
        std::fprintf(stderr, "taxicore-server: %s\n", qPrintable(error));
        return 1;
    }
    QObject::connect(&signalWatcher, &taxicore::UnixSignalWatcher::terminationRequested, &app, [&](int) {
        host.stop(kShutdownGraceMs);
        app.quit();
    });
    signalWatcher.setServing();
    std::printf("listening on %s\n", qPrintable(host.url().toString(QUrl::StripTrailingSlash)));
    std::fflush(stdout);
    return app.exec();
}

} // namespace

int main(int argc, char *argv[])
{
    try {
        return run(argc, argv);
    } catch (const std::exception &e) { // thrown after the start, or in a worker process
        std::fprintf(stderr, "taxicore-server: stopped: %s\n", qPrintable(describeFailure(e)));
        return 1;
    }
}
