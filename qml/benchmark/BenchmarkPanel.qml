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
    // How the last run ended (BenchmarkOutcome): "", "running", "finished", "stopped", "failed".
    property string outcome: ""
    property int resultsBefore: 0 // results of earlier runs: the run's stages are the ones above
    property bool stopRequested: false
    property string note: "" // what an export wrote
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
    // "unlimited (closed loop)" for 0: each client sends its next request when the last is answered.
    function rateText(rate) {
        return rate > 0 ? qsTr("%1 req/s (open loop)").arg(rate) : qsTr("unlimited (closed loop)")
    }
    function runOnce() {
        saveForm()
        liveSeries.clear()
        liveAxisX.max = 5
        liveAxisY.max = 100
        resultsBefore = runner.results.length
        stopRequested = false
        const t = target()
        const ok = t.startsWith("http://")
            ? runner.startUrl(t, "", connectionsBox.value, durationBox.value, rateBox.value)
            : runner.start(t, connectionsBox.value, durationBox.value, rateBox.value)
        status = ok ? qsTr("Running %1 against %2 mode: %3 connections, %4 s, rate %5")
                          .arg(t).arg(ConsoleBackend.mode).arg(connectionsBox.value).arg(durationBox.value)
                          .arg(rateText(rateBox.value))
                    : runner.error
        outcome = ok ? "running" : "failed"
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
        outcome = "running"
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
            panel.outcome = ok ? (panel.stopRequested ? "stopped" : "finished") : "failed"
            panel.status = ok ? "" : runner.error
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
                    panel.outcome = "failed"
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
        Label { text: qsTr("Connections") }
        SpinBox {
            id: connectionsBox
            from: 1; to: 10000; value: 64; editable: true
            Layout.fillWidth: true
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Concurrent client connections taxicore-bench keeps open")
        }
        Label { text: qsTr("Duration (s)") }
        SpinBox { id: durationBox; from: 1; to: 600; value: 5; editable: true; Layout.fillWidth: true }
        Label { text: qsTr("Rate") }
        SpinBox {
            id: rateBox
            objectName: "rateBox"
            Layout.columnSpan: 3
            Layout.fillWidth: true
            from: 0
            to: 1000000
            value: 0
            editable: true
            // 0 reads "unlimited (closed loop)", not a bare "0"; typing "unlimited" or 0 both mean it.
            textFromValue: (value, locale) => panel.rateText(value)
            valueFromText: (text, locale) => {
                const n = parseInt(text)
                return isNaN(n) ? 0 : n
            }
            validator: RegularExpressionValidator { regularExpression: /\d{0,7}( .*)?|unlimited.*/ }
            ToolTip.visible: hovered
            ToolTip.text: qsTr("0 = unlimited (closed loop): each connection sends its next request as soon as the last "
                               + "is answered. Above 0: that many requests per second in all (open loop), late "
                               + "answers counted from when the request was due")
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
            onClicked: { panel.compareQueue = []; panel.stopRequested = true; runner.stop() }
        }
    }
    // The run's state where it cannot be missed; its figures once it finished.
    BenchmarkOutcome {
        id: outcomeBand
        objectName: "benchmarkOutcome"
        Layout.fillWidth: true
        outcomeState: panel.outcome
        mode: ConsoleBackend.mode
        // The run's newest row, once it ended with figures (finished, or stopped after some).
        result: (panel.outcome === "finished" || panel.outcome === "stopped") && runner.results.length > panel.resultsBefore
                ? runner.results[0] : null
        stageCount: Math.max(1, runner.results.length - panel.resultsBefore)
        detail: runner.running && runner.stage !== ""
                ? qsTr("%1 — stage %2, %3 s").arg(panel.status).arg(runner.stage).arg(runner.elapsedSeconds.toFixed(0))
                : panel.status
    }
    Label {
        Layout.fillWidth: true
        visible: text !== ""
        wrapMode: Text.Wrap
        text: panel.note
    }

    ChartView {
        id: liveChart
        Layout.fillWidth: true
        Layout.preferredHeight: 170
        title: qsTr("Requests per second while it runs")
        legend.visible: false
        antialiasing: true
        backgroundColor: palette.base
        titleColor: palette.text
        margins { left: 2; right: 2; top: 2; bottom: 2 }
        ValueAxis {
            id: liveAxisX
            min: 0; max: 5
            labelFormat: "%d"
            labelsColor: liveChart.palette.text
            titleText: qsTr("seconds into the run")
            titleBrush: liveChart.palette.text
        }
        ValueAxis {
            id: liveAxisY
            min: 0; max: 100; tickCount: 5
            labelFormat: "%.0f"
            labelsColor: liveChart.palette.text
            titleText: qsTr("req/s")
            titleBrush: liveChart.palette.text
        }
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
                panel.note = qsTr("Charts saved next to %1").arg(file)
            } else {
                panel.note = runner.exportResults(selectedFile)
                    ? qsTr("Exported to %1").arg(file) : qsTr("Could not write %1").arg(file)
            }
        }
    }
}
