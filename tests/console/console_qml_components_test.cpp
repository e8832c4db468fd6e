// QtQuickTest runner for the TaxiCore QML components (tests/console/qml/tst_*.qml).
// Qt 6.4's default import path lacks qrc:/qt/qml, where the static TaxiCore modules live.
#include "ConsoleKit.h"

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

QUICK_TEST_MAIN_WITH_SETUP(console_qml_components, QmlComponentsSetup)
#include "console_qml_components_test.moc"
