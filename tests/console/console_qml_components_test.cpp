// QtQuickTest runner for the TaxiCore QML components (tests/console/qml/tst_*.qml).
// Qt 6.4's default import path lacks qrc:/qt/qml, where the static TaxiCore modules live.
// A QApplication, not the runner's own QGuiApplication: the charts (QtCharts) draw through
// QGraphicsScene, and tst_RequestRateChart makes one.
#include "ConsoleKit.h"

#include <QApplication>
#include <QQmlEngine>
#include <QQmlExtensionPlugin>
#include <QTemporaryDir>
#include <QtQuickTest>

Q_IMPORT_QML_PLUGIN(TaxiCorePlugin)
Q_IMPORT_QML_PLUGIN(TaxiCoreConsolePlugin)

class QmlComponentsSetup : public QObject {
    Q_OBJECT

public Q_SLOTS:
    // Components that keep settings (the settings dialog) write to a throwaway QSettings path.
    void applicationAvailable() { taxicore::test::useSettingsDirectory(m_settings.path()); }
    void qmlEngineAvailable(QQmlEngine *engine) { engine->addImportPath(QStringLiteral("qrc:/qt/qml")); }

private:
    QTemporaryDir m_settings;
};

int main(int argc, char **argv)
{
    QApplication app(argc, argv); // the runner uses an application that exists
    QTEST_SET_MAIN_SOURCE_PATH
    QmlComponentsSetup setup;
    return quick_test_main_with_setup(argc, argv, "console_qml_components", QUICK_TEST_SOURCE_DIR, &setup);
}
#include "console_qml_components_test.moc"
