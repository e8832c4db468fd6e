import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import QtCharts
import TaxiCore.Console

// One-click benchmarks against the console's own server (or any URL), run by a separate
// taxicore-bench process: live req/s while it runs, results per mode, history, export.
ColumnLayout {
    id: panel

    property var compareQueue: [] // modes still to run in "compare all modes"
    property string status: ""
    readonly property alias runner: runner

    // The smallest of 1, 2, 5 × 10^k that is at least x (four round ticks above zero).
    function niceStep(x) {
        const p = Math.pow(10, Math.floor(Math.log10(Math.max(x, 1e-9))))
        for (const m of [1, 2, 5, 10]) {
            if (m * p >= x)
                return m * p
        }
        return 10 * p
    }
    function target() { return targetBox.editText.trim() }
    function setTarget(t) { targetBox.editText = t }
    function runOnce() {
        saveForm()
        liveSeries.clear()
        liveAxisX.max = 5
        liveAxisY.max = 100
        const t = target()
        const ok = t.startsWith("http://")
            ? runner.startUrl(t, "", connectionsBox.value, durationBox.value, rateBox.value)
            : runner.start(t, connectionsBox.value, durationBox.value, rateBox.value)
        status = ok ? qsTr("Running against %1 mode…").arg(ConsoleBackend.mode) : runner.error
    }
    function compareAllModes() {
        compareQueue = ["single", "pool", "processes"]
        nextMode()
    }
    function nextMode() {
        if (compareQueue.length === 0) {
            status = qsTr("Compared all modes.")
            return
        }
        const mode = compareQueue[0]
        compareQueue = compareQueue.slice(1)
        status = qsTr("Switching to %1…").arg(mode)
        ConsoleBackend.applyRuntime(mode, ConsoleBackend.workers, ConsoleBackend.threads, ConsoleBackend.policy)
    }

    spacing: 6

    // The form as last run (QSettings).
    Component.onCompleted: {
        targetBox.editText = Preferences.value("benchmark/target", "/hello")
        connectionsBox.value = Preferences.value("benchmark/connections", 64)
        durationBox.value = Preferences.value("benchmark/seconds", 5)
        rateBox.value = Preferences.value("benchmark/rate", 0)
    }
    function saveForm() {
        Preferences.setValue("benchmark/target", target())
        Preferences.setValue("benchmark/connections", connectionsBox.value)
        Preferences.setValue("benchmark/seconds", durationBox.value)
        Preferences.setValue("benchmark/rate", rateBox.value)
    }

    BenchmarkRunner {
        id: runner
        objectName: "benchmarkRunner"
        backend: ConsoleBackend
        onProgressed: (second, rps, p99) => {
            liveSeries.append(liveSeries.count + 1, rps)
            liveAxisY.max = Math.max(liveAxisY.max, 4 * panel.niceStep(rps * 1.1 / 4))
            liveAxisX.max = Math.max(liveAxisX.max, liveSeries.count)
        }
        onFinished: ok => {
            panel.status = ok ? qsTr("Done.") : qsTr("Failed: %1").arg(runner.error)
            if (ok && panel.compareQueue.length > 0)
                panel.nextMode()
            else
                panel.compareQueue = []
        }
    }
    Connections {
        target: ConsoleBackend
        enabled: panel.compareQueue !== undefined
        function onRuntimeApplied(error) {
            if (panel.status.startsWith(qsTr("Switching"))) {
                if (error === "")
                    panel.runOnce()
                else {
                    panel.status = qsTr("Not switched: %1").arg(error)
                    panel.compareQueue = []
                }
            }
        }
    }

    GridLayout {
        Layout.fillWidth: true
        columns: 4
        enabled: !runner.running
        Label { text: qsTr("Target") }
        ComboBox {
            id: targetBox
            objectName: "benchmarkTarget"
            Layout.columnSpan: 3
            Layout.fillWidth: true
            editable: true
            model: ["/hello", "/fib?n=25", "/cpu"].concat(runner.scenarios)
            ToolTip.visible: hovered
            ToolTip.text: qsTr("A path on this server, a seed scenario, or any http:// URL")
        }
        Label { text: qsTr("Clients") }
        SpinBox { id: connectionsBox; from: 1; to: 10000; value: 64; editable: true; Layout.fillWidth: true }
        Label { text: qsTr("Seconds") }
        SpinBox { id: durationBox; from: 1; to: 600; value: 5; editable: true; Layout.fillWidth: true }
        Label { text: qsTr("Rate") }
        SpinBox {
            id: rateBox
            from: 0
            to: 1000000
            value: 0
            editable: true
            Layout.fillWidth: true
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Requests per second (open loop); 0 = as fast as answered")
        }
    }
    RowLayout {
        Layout.fillWidth: true
        Button {
            objectName: "runBenchmark"
            text: qsTr("Run (Ctrl+B)")
            enabled: !runner.running && ConsoleBackend.serving
            onClicked: panel.runOnce()
        }
        Button {
            text: qsTr("Compare all modes")
            enabled: !runner.running && ConsoleBackend.canSwitchMode && !panel.target().startsWith("http://")
            onClicked: panel.compareAllModes()
        }
        Button {
            text: qsTr("Stop")
            enabled: runner.running
            onClicked: { panel.compareQueue = []; runner.stop() }
        }
    }
    Label {
        Layout.fillWidth: true
        visible: text !== ""
        wrapMode: Text.Wrap
        text: runner.running && runner.stage !== ""
              ? qsTr("%1 — stage %2, %3 s").arg(panel.status).arg(runner.stage).arg(runner.elapsedSeconds.toFixed(0))
              : panel.status
    }

    ChartView {
        id: liveChart
        Layout.fillWidth: true
        Layout.preferredHeight: 150
        title: qsTr("Benchmark req/s")
        legend.visible: false
        antialiasing: true
        backgroundColor: palette.base
        titleColor: palette.text
        margins { left: 2; right: 2; top: 2; bottom: 2 }
        ValueAxis { id: liveAxisX; min: 0; max: 5; labelFormat: "%d"; labelsColor: liveChart.palette.text }
        ValueAxis { id: liveAxisY; min: 0; max: 100; tickCount: 5; labelFormat: "%.0f"; labelsColor: liveChart.palette.text }
        LineSeries { id: liveSeries; axisX: liveAxisX; axisY: liveAxisY; width: 2; color: "#d61f69" }
    }

    TabBar {
        id: resultTabs
        Layout.fillWidth: true
        TabButton { text: qsTr("Table") }
        TabButton { text: qsTr("Charts") }
    }
    StackLayout {
        Layout.fillWidth: true
        Layout.fillHeight: true
        currentIndex: resultTabs.currentIndex
        BenchmarkResults {
            results: runner.results
            onExportRequested: exportDialog.open()
            onClearRequested: runner.clearResults()
        }
        BenchmarkCharts {
            id: resultCharts
            results: runner.results
        }
    }

    FileDialog {
        id: exportDialog
        fileMode: FileDialog.SaveFile
        nameFilters: [qsTr("CSV (*.csv)"), qsTr("JSON (*.json)"), qsTr("Charts as PNG (*.png)")]
        onAccepted: {
            const file = selectedFile.toString()
            if (file.endsWith(".png")) {
                resultCharts.savePng(file.replace(/^file:\/\//, ""))
                panel.status = qsTr("Charts saved next to %1").arg(file)
            } else {
                panel.status = runner.exportResults(selectedFile)
                    ? qsTr("Exported to %1").arg(file) : qsTr("Could not write %1").arg(file)
            }
        }
    }
}
