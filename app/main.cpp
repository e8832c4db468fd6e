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

int main(int argc, char *argv[])
{
    // QApplication, not QGuiApplication: QtCharts draws through QGraphicsScene.
    QApplication app(argc, argv);
    QApplication::setApplicationName(QStringLiteral("taxicore"));
    QApplication::setOrganizationName(QStringLiteral("TaxiCore"));
    QApplication::setApplicationVersion(QStringLiteral(TAXICORE_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("TaxiCore dispatcher console with an embedded taxi server"));
    parser.addHelpOption();
    parser.addVersionOption();
    taxicore::addServerOptions(parser);
    ConsoleHooks::addOptions(parser);
    parser.process(app);

    taxicore::ServerOptions options;
    QString error;
    if (!taxicore::readServerOptions(parser, options, error)) {
        std::fprintf(stderr, "taxicore: %s\n", qPrintable(error));
        return 2;
    }
    // The last execution model, tariff and demand rate (flags given on the command line win).
    ConsoleSettings::restore(options, parser);
    taxicore::raiseFileLimitAndReport("taxicore", options.limits.maxConnections);

    // SIGTERM/SIGINT quit like closing the window: the server drains and its workers stop.
    // Watched before the server starts: a script may stop us as soon as it reads our URL.
    taxicore::UnixSignalWatcher signalWatcher;
    QObject::connect(&signalWatcher, &taxicore::UnixSignalWatcher::terminationRequested, &app, &QApplication::quit);

    ConsoleBackend backend(options);
    ConsoleBackend::setInstance(&backend);
    const bool serving = backend.start();
    if (serving) {
        const QUrl url = backend.url();
        std::printf("listening on http://%s:%d\n", qPrintable(url.host()), url.port());
        std::fflush(stdout);
    } else {
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
        return 1;

    ConsoleHooks hooks(parser, engine, backend);
    const int rc = app.exec();
    backend.stop();
    return serving ? rc : 1;
}
