// The dispatcher console: the embedded taxi server plus its QML window. Everything but the
// wiring lives in taxicore_console (C++) and the TaxiCore QML module.
#include "ConsoleBackend.h"
#include "ConsoleHooks.h"
#include "runtime/FileLimit.h"
#include "runtime/ServerOptions.h"
#include "runtime/UnixSignalWatcher.h"
#include "settings/ConsoleSettings.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QQmlApplicationEngine>
#include <QQmlExtensionPlugin>
#include <QQuickStyle>
#include <cstdio>

Q_IMPORT_QML_PLUGIN(TaxiCorePlugin)
Q_IMPORT_QML_PLUGIN(TaxiCoreConsolePlugin)

namespace {

// The window draws without a depth or stencil buffer: every clip in the console is a rectangle
// (scissor), and a software rasteriser (Mesa llvmpipe, as under Xvfb) only takes its fast paths for
// textured and flat quads when the framebuffer has no depth/stencil attached. Set unless the user
// set them (QSG_NO_DEPTH_BUFFER=, QSG_NO_STENCIL_BUFFER= in the environment).
void drawWithoutDepthAndStencil()
{
    for (const char *name : {"QSG_NO_DEPTH_BUFFER", "QSG_NO_STENCIL_BUFFER"}) {
        if (!qEnvironmentVariableIsSet(name))
            qputenv(name, "1");
    }
}

// Exit status of a bad command line (as taxicore-server), and of a server that cannot start.
constexpr int kExitUsage = 2;
constexpr int kExitStartupFailed = 1;

// Qt's own GUI flags (-platform offscreen, -style Fusion, ...): QGuiApplication takes them out of
// argv itself, so the flag check, which runs before it, must not call them unknown.
struct QtGuiFlag {
    const char *name;
    bool takesValue;
};
constexpr QtGuiFlag kQtGuiFlags[] = {
    {"platform", true},        {"platformpluginpath", true},
    {"platformtheme", true},   {"plugin", true},
    {"qwindowgeometry", true}, {"qwindowicon", true},
    {"qwindowtitle", true},    {"display", true},
    {"geometry", true},        {"name", true},
    {"title", true},           {"icon", true},
    {"session", true},         {"style", true},
    {"stylesheet", true},      {"reverse", false},
    {"widgetcount", false},    {"nograb", false},
    {"dograb", false},         {"sync", false},
};

// The arguments without Qt's GUI flags (given with one dash or two, value as the next argument).
QStringList withoutQtGuiFlags(int argc, char *argv[])
{
    QStringList args;
    for (int i = 0; i < argc; ++i) {
        const QString arg = QString::fromLocal8Bit(argv[i]);
        if (arg == QLatin1String("--")) { // the rest are not flags
            for (; i < argc; ++i)
                args << QString::fromLocal8Bit(argv[i]);
            break;
        }
        const QString bare = arg.startsWith(QLatin1String("--")) ? arg.mid(2) : arg.mid(1);
        const QtGuiFlag *gui = nullptr;
        if (i > 0 && arg.startsWith(QLatin1Char('-'))) {
            for (const QtGuiFlag &flag : kQtGuiFlags)
                gui = bare == QLatin1String(flag.name) ? &flag : gui;
        }
        if (!gui && bare.startsWith(QLatin1String("qmljsdebugger="))) // Qt's QML debugger, -qmljsdebugger=port:N
            continue;
        if (!gui)
            args << arg;
        else if (gui->takesValue)
            ++i;
    }
    return args;
}

// Reads and checks the whole command line before any window: --help and --version print and exit 0
// without a display, a bad flag exits 2 naming it. Returns -1 when the console should start.
int parseCommandLine(int argc, char *argv[], QCommandLineParser &parser, taxicore::ServerOptions &options)
{
    parser.setApplicationDescription(QStringLiteral("TaxiCore dispatcher console with an embedded taxi server"));
    const QCommandLineOption help = parser.addHelpOption();
    const QCommandLineOption version = parser.addVersionOption();
    taxicore::addServerOptions(parser);
    ConsoleHooks::addOptions(parser);

    const QStringList args = withoutQtGuiFlags(argc, argv);
    if (!parser.parse(args)) {
        std::fprintf(stderr, "taxicore: %s\nRun 'taxicore --help' for the flags.\n", qPrintable(parser.errorText()));
        return kExitUsage;
    }
    if (parser.isSet(help) || parser.isSet(QStringLiteral("help-all")) || parser.isSet(version)) {
        // A core application, not a GUI one: the help text names the program from it, and it needs no display.
        QCoreApplication textOnly(argc, argv);
        parser.process(args); // prints the help or the version and exits 0
    }
    QString error; // a stray argument too: readServerOptions refuses it for both programs
    if (!taxicore::readServerOptions(parser, options, error) || !ConsoleHooks::checkOptions(parser, error)) {
        std::fprintf(stderr, "taxicore: %s\n", qPrintable(error));
        return kExitUsage;
    }
    return -1;
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication::setApplicationName(QStringLiteral("taxicore"));
    QCoreApplication::setOrganizationName(QStringLiteral("TaxiCore"));
    QCoreApplication::setApplicationVersion(QStringLiteral(TAXICORE_VERSION));

    QCommandLineParser parser;
    taxicore::ServerOptions options;
    if (const int rc = parseCommandLine(argc, argv, parser, options); rc >= 0)
        return rc;

    drawWithoutDepthAndStencil(); // read when the first window is made
    // QApplication, not QGuiApplication: QtCharts draws through QGraphicsScene.
    QApplication app(argc, argv);

    // The last execution model, tariff and demand rate (flags given on the command line win).
    ConsoleSettings::restore(options, parser);
    taxicore::raiseFileLimitAndReport("taxicore", options.limits.maxConnections);

    // SIGTERM/SIGINT/SIGHUP quit like closing the window: the server drains and its workers stop.
    // Watched before the server starts: a script may stop us as soon as it reads our URL. While
    // the start blocks, a signal ends the process at once (nothing is served yet).
    taxicore::UnixSignalWatcher signalWatcher;
    QObject::connect(&signalWatcher, &taxicore::UnixSignalWatcher::terminationRequested, &app, &QApplication::quit);

    ConsoleBackend backend(options);
    ConsoleBackend::setInstance(&backend);
    const bool serving = backend.start();
    signalWatcher.setServing(); // the event loop runs from here on, serving or showing why not
    if (serving) {
        const QUrl url = backend.url();
        std::printf("listening on http://%s:%d\n", qPrintable(url.host()), url.port());
        std::fflush(stdout);
    } else {
        // Also in a window (StartupError.qml): a console started from the desktop menu has no terminal.
        std::fprintf(stderr, "taxicore: cannot start the server: %s\n", qPrintable(backend.errorString()));
    }

    // Fusion follows the system palette (light or dark); QT_QUICK_CONTROLS_STYLE still wins.
    if (qEnvironmentVariableIsEmpty("QT_QUICK_CONTROLS_STYLE"))
        QQuickStyle::setStyle(QStringLiteral("Fusion"));

    QQmlApplicationEngine engine;
    engine.addImportPath(QStringLiteral("qrc:/qt/qml")); // not a default import path before 6.5
    engine.load(QUrl(serving ? QStringLiteral("qrc:/qt/qml/TaxiCore/Main.qml")
                             : QStringLiteral("qrc:/qt/qml/TaxiCore/StartupError.qml")));
    if (engine.rootObjects().isEmpty())
        return kExitStartupFailed;

    ConsoleHooks hooks(parser, engine, backend);
    const int rc = app.exec();
    backend.stop();
    return serving ? rc : kExitStartupFailed;
}
