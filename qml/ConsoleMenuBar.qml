import QtQuick
import QtQuick.Controls
import TaxiCore.Console

// File / View / Server / Help, each entry with its keyboard shortcut (active while the menus are
// closed). It only says what the user asked for; Main.qml does it.
MenuBar {
    id: bar

    // The side panel shown ("bookings", "server", "benchmark", "reports"): its entry is checked.
    property string panel: "bookings"
    property bool canExport: false // the report has trips to export
    property bool benchmarkRunning: false

    signal panelRequested(string name)
    signal exportRequested()
    signal quitRequested()
    signal findRequested()
    signal zoomRequested(int steps) // +1 in, -1 out, 0 the whole city
    signal modeRequested(string mode)
    signal benchmarkRequested()
    signal pricingRequested()
    signal riderPageRequested()
    signal aboutRequested()

    component ModeAction: Action {
        required property string mode
        checkable: true
        checked: ConsoleBackend.mode === mode
        enabled: ConsoleBackend.canSwitchMode && !ConsoleBackend.applying
        onTriggered: {
            checked = Qt.binding(() => ConsoleBackend.mode === mode) // a click must not leave it ticked
            bar.modeRequested(mode)
        }
    }

    Menu {
        title: qsTr("&File")
        Action {
            objectName: "exportAction"
            text: qsTr("&Export report…")
            shortcut: "Ctrl+E"
            enabled: bar.canExport
            onTriggered: bar.exportRequested()
        }
        MenuSeparator {}
        Action { text: qsTr("&Quit"); shortcut: StandardKey.Quit; onTriggered: bar.quitRequested() }
    }
    Menu {
        title: qsTr("&View")
        Action {
            text: qsTr("&Bookings"); shortcut: "Ctrl+1"; checkable: true; checked: bar.panel === "bookings"
            onTriggered: bar.panelRequested("bookings")
        }
        Action {
            text: qsTr("&Server"); shortcut: "Ctrl+2"; checkable: true; checked: bar.panel === "server"
            onTriggered: bar.panelRequested("server")
        }
        Action {
            text: qsTr("Bench&mark"); shortcut: "Ctrl+3"; checkable: true; checked: bar.panel === "benchmark"
            onTriggered: bar.panelRequested("benchmark")
        }
        Action {
            text: qsTr("&Reports"); shortcut: "Ctrl+4"; checkable: true; checked: bar.panel === "reports"
            onTriggered: bar.panelRequested("reports")
        }
        MenuSeparator {}
        Action { text: qsTr("&Find booking…"); shortcut: StandardKey.Find; onTriggered: bar.findRequested() }
        MenuSeparator {}
        Action { text: qsTr("Zoom &in"); shortcut: StandardKey.ZoomIn; onTriggered: bar.zoomRequested(1) }
        Action { text: qsTr("Zoom &out"); shortcut: StandardKey.ZoomOut; onTriggered: bar.zoomRequested(-1) }
        Action { text: qsTr("&Whole city"); shortcut: "Ctrl+0"; onTriggered: bar.zoomRequested(0) }
    }
    Menu {
        title: qsTr("&Server")
        // The execution model, switched live; checked is what serves (the Server panel says how a switch went).
        ModeAction { mode: "single"; text: qsTr("Mode: &single thread") }
        ModeAction { mode: "pool"; text: qsTr("Mode: thread &pool") }
        ModeAction { mode: "processes"; text: qsTr("Mode: worker pr&ocesses") }
        MenuSeparator {}
        Action {
            objectName: "benchmarkAction"
            text: qsTr("Start &benchmark")
            shortcut: "Ctrl+B"
            enabled: !bar.benchmarkRunning
            onTriggered: bar.benchmarkRequested()
        }
        Action { text: qsTr("&Pricing…"); shortcut: "Ctrl+,"; onTriggered: bar.pricingRequested() }
        Action { text: qsTr("Open the &rider page"); shortcut: "Ctrl+L"; onTriggered: bar.riderPageRequested() }
    }
    Menu {
        title: qsTr("&Help")
        Action { text: qsTr("&About TaxiCore"); shortcut: "F1"; onTriggered: bar.aboutRequested() }
    }
}
