import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore
import TaxiCore.Console

// The dispatcher console: server status on top, the live map, and a side panel with the
// bookings and the server.
ApplicationWindow {
    id: window
    width: 1280
    height: 800
    minimumWidth: 960
    minimumHeight: 600
    visible: true
    title: qsTr("TaxiCore — %1").arg(ConsoleBackend.url)

    // The side panel shown: "bookings" or "server" (also set by --panel).
    property string panel: "bookings"
    readonly property var panels: ["bookings", "server", "benchmark", "reports"]
    readonly property int benchmarkResultCount: benchmarkPanel.runner.results.length

    // Test hook (--reassign-after-ms): the newest open booking gets another car; {ok, carId, ...}.
    function reassignNewestBooking() {
        panel = "bookings"
        return bookingsPanel.reassignNewestOpen()
    }

    SettingsDialog { id: settingsDialog }

    // Test hook (--benchmark): a benchmark of `target` with the panel's other settings.
    function startBenchmark(target) {
        panel = "benchmark"
        benchmarkPanel.setTarget(target)
        benchmarkPanel.runOnce()
    }

    header: ServerBar {}

    menuBar: MenuBar {
        Menu {
            title: qsTr("&Help")
            Action { text: qsTr("&About TaxiCore"); shortcut: "F1"; onTriggered: aboutDialog.open() }
        }
    }
    AboutDialog { id: aboutDialog }

    // Layout kept across restarts (QSettings); flags such as --panel are applied after this.
    Component.onCompleted: {
        width = Preferences.value("window/width", width)
        height = Preferences.value("window/height", height)
        panel = Preferences.value("window/panel", panel)
        const splitState = Preferences.value("window/split")
        if (splitState)
            split.restoreState(splitState)
    }
    onClosing: {
        Preferences.setValue("window/width", width)
        Preferences.setValue("window/height", height)
        Preferences.setValue("window/panel", panel)
        Preferences.setValue("window/split", split.saveState())
    }

    SplitView {
        id: split
        anchors.fill: parent

        CityMap {
            id: cityMap
            SplitView.fillWidth: true
            selectedBookingId: bookingsPanel.selectedBookingId
            onSelectedCarIdChanged: {
                // A click elsewhere on the map ends the booking selection too.
                if (selectedCarId !== bookingsPanel.selectedCarId)
                    bookingsPanel.clearSelection()
            }
        }

        Pane {
            SplitView.preferredWidth: 430
            SplitView.minimumWidth: 320
            padding: 8

            ColumnLayout {
                anchors.fill: parent
                TabBar {
                    id: tabs
                    Layout.fillWidth: true
                    currentIndex: Math.max(0, window.panels.indexOf(window.panel))
                    onCurrentIndexChanged: window.panel = window.panels[currentIndex]
                    TabButton { text: qsTr("Bookings") }
                    TabButton { text: qsTr("Server") }
                    TabButton { text: qsTr("Benchmark") }
                    TabButton { text: qsTr("Reports") }
                }
                StackLayout {
                    Layout.fillWidth: true
                    Layout.fillHeight: true
                    currentIndex: tabs.currentIndex
                    BookingsPanel {
                        id: bookingsPanel
                        onSelectedCarIdChanged: cityMap.selectedCarId = selectedCarId
                    }
                    ServerPanel {
                        id: serverPanel
                        onSettingsRequested: settingsDialog.open()
                    }
                    BenchmarkPanel {
                        id: benchmarkPanel
                    }
                    ReportsPanel {
                        id: reportsPanel
                    }
                }
            }
        }
    }

    Shortcut { sequence: StandardKey.Find; onActivated: { window.panel = "bookings"; bookingsPanel.focusFilter() } }
    Shortcut { sequence: "Ctrl+1"; onActivated: window.panel = "bookings" }
    Shortcut { sequence: "Ctrl+2"; onActivated: window.panel = "server" }
    Shortcut { sequence: "Ctrl+3"; onActivated: window.panel = "benchmark" }
    Shortcut { sequence: "Ctrl+4"; onActivated: window.panel = "reports" }
    Shortcut { sequence: "Ctrl+E"; enabled: window.panel === "reports"; onActivated: reportsPanel.exportCsv() }
    Shortcut {
        sequence: "Ctrl+B"
        onActivated: {
            window.panel = "benchmark"
            if (!benchmarkPanel.runner.running)
                benchmarkPanel.runOnce()
        }
    }
    Shortcut { sequences: [StandardKey.ZoomIn, "Ctrl+="]; onActivated: cityMap.zoomIn() }
    Shortcut { sequence: StandardKey.ZoomOut; onActivated: cityMap.zoomOut() }
    Shortcut { sequence: "Ctrl+0"; onActivated: cityMap.fit() }
    Shortcut { sequences: [StandardKey.Delete]; onActivated: bookingsPanel.cancelSelected() }
    Shortcut { sequence: "Ctrl+R"; onActivated: { window.panel = "bookings"; bookingsPanel.reassignSelected() } }
    Shortcut { sequences: [StandardKey.Preferences, "Ctrl+,"]; onActivated: settingsDialog.open() }
    Shortcut { sequence: "Esc"; onActivated: { bookingsPanel.clearSelection(); cityMap.selectedCarId = 0 } }
    Shortcut { sequence: "Ctrl+L"; onActivated: Qt.openUrlExternally(ConsoleBackend.url) }
    Shortcut { sequence: StandardKey.Quit; onActivated: Qt.quit() }
    Shortcut { sequence: "Ctrl+Return"; enabled: window.panel === "server"; onActivated: serverPanel.apply() }
}
