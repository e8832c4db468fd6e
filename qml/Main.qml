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

    header: ColumnLayout {
        spacing: 0
        ServerBar { Layout.fillWidth: true }
        KpiBar { Layout.fillWidth: true; kpis: operations }
    }
    OperationsKpis {
        id: operations
        backend: ConsoleBackend
    }
    ManualDispatch {
        id: manualDispatch
        backend: ConsoleBackend
        // The booking, now with the car clicked, stays selected (highlighted on the map).
        onFinished: (ok, status, bookingId, carId) => { if (ok) bookingsPanel.select(bookingId, carId) }
    }

    menuBar: ConsoleMenuBar {
        panel: window.panel
        canExport: reportsPanel.report.tripCount > 0
        benchmarkRunning: benchmarkPanel.runner.running
        onPanelRequested: name => window.panel = name
        onExportRequested: { window.panel = "reports"; reportsPanel.exportCsv() }
        onQuitRequested: Qt.quit()
        onFindRequested: { window.panel = "bookings"; bookingsPanel.focusFilter() }
        onZoomRequested: steps => steps > 0 ? cityMap.zoomIn() : steps < 0 ? cityMap.zoomOut() : cityMap.fit()
        onModeRequested: mode => {
            window.panel = "server"
            ConsoleBackend.applyRuntime(mode, ConsoleBackend.workers, ConsoleBackend.threads, ConsoleBackend.policy)
        }
        onBenchmarkRequested: { window.panel = "benchmark"; benchmarkPanel.runOnce() }
        onPricingRequested: settingsDialog.open()
        onRiderPageRequested: Qt.openUrlExternally(ConsoleBackend.url)
        onAboutRequested: aboutDialog.open()
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
            OpsOverlay {
                id: opsOverlay
                anchors.fill: parent
                map: cityMap
                kpis: operations
                dispatch: manualDispatch
                selectedBookingId: bookingsPanel.selectedBookingId
                onAlertActivated: (kind, bookingId, carId) => {
                    if (kind === "waiting_booking")
                        bookingsPanel.select(bookingId, carId)
                    else if (kind === "stale_car")
                        cityMap.selectedCarId = carId
                    else
                        window.panel = "server"
                }
            }
        }

        Pane {
            SplitView.preferredWidth: Math.max(470, window.width * 0.3) // tables need room; more on big screens
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
                        objectName: "bookingsPanel"
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

    // Keys without a menu entry (the menus hold the rest, see ConsoleMenuBar.qml).
    Shortcut { sequence: "Ctrl+="; onActivated: cityMap.zoomIn() } // Ctrl++ without Shift
    Shortcut { sequences: [StandardKey.Delete]; onActivated: bookingsPanel.cancelSelected() }
    Shortcut { sequence: "Ctrl+R"; onActivated: { window.panel = "bookings"; bookingsPanel.reassignSelected() } }
    Shortcut { sequence: "Esc"; onActivated: { bookingsPanel.clearSelection(); cityMap.selectedCarId = 0; manualDispatch.cancel() } }
    Shortcut { sequence: "Ctrl+D"; onActivated: manualDispatch.pick(bookingsPanel.selectedBookingId) }
    Shortcut { sequence: "Ctrl+Return"; enabled: window.panel === "server"; onActivated: serverPanel.apply() }
}
