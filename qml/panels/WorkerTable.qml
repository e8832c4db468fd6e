import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// The serving processes: slot, pid, state, req/s, p99, CPU, memory, restarts, heartbeat; "kill"
// sends SIGKILL to a worker process so the supervisor's recovery can be watched. Every header
// is a word with its unit, and hovering it says what the column measures.
ColumnLayout {
    id: table

    required property var model
    readonly property int rowHeight: 20
    readonly property int maxVisibleRows: 6
    readonly property int columnGap: 3

    readonly property var columns: [
        { title: qsTr("#"), width: 16, tip: qsTr("Slot: 0 is the primary process, 1… the worker processes") },
        { title: qsTr("pid"), width: 44, tip: qsTr("Process id") },
        { title: qsTr("state"), width: 52, tip: qsTr("starting, serving, draining or exited") },
        { title: qsTr("req/s"), width: 36, tip: qsTr("Requests answered per second") },
        { title: qsTr("p99 ms"), width: 48, tip: qsTr("99th percentile latency over the last second, milliseconds") },
        { title: qsTr("CPU"), width: 34, tip: qsTr("CPU use, percent of one core") },
        { title: qsTr("memory"), width: 52, tip: qsTr("Resident memory (RSS), megabytes") },
        { title: qsTr("restarts"), width: 50, tip: qsTr("How often this slot's process was replaced") },
        { title: qsTr("heartbeat"), width: 64,
          tip: qsTr("Seconds since the process's event loop last reported; a silent one is replaced") }
    ]

    spacing: 1

    Label { text: qsTr("Processes"); font.bold: true }
    Row {
        spacing: table.columnGap
        Repeater {
            model: table.columns
            Label {
                required property var modelData
                objectName: "workerHeader"
                width: modelData.width
                text: modelData.title
                font.bold: true
                font.pixelSize: 11
                elide: Text.ElideRight
                ToolTip.visible: headerHover.hovered
                ToolTip.text: modelData.tip
                HoverHandler { id: headerHover }
            }
        }
    }
    ListView {
        objectName: "workerTable"
        Layout.fillWidth: true
        // As tall as its rows (up to a few): no empty band under a single process.
        Layout.preferredHeight: Math.max(1, Math.min(count, table.maxVisibleRows)) * table.rowHeight
        clip: true
        model: table.model
        ScrollBar.vertical: ScrollBar {}
        delegate: Row {
            id: row
            spacing: table.columnGap
            required property int slot
            required property int pid
            required property string workerState
            required property double requestsPerSecond
            required property double p99Ms
            required property double cpuPercent
            required property double rssMb
            required property int restarts
            required property var heartbeatAgeMs

            height: table.rowHeight
            readonly property var cells: [
                slot, pid, workerState, requestsPerSecond.toFixed(0),
                p99Ms > 0 ? (p99Ms < 10 ? p99Ms.toFixed(2) : p99Ms.toFixed(0)) : "–",
                cpuPercent.toFixed(0) + " %", rssMb.toFixed(0) + " MB", restarts,
                heartbeatAgeMs < 10000 ? (heartbeatAgeMs / 1000).toFixed(1) + " s" : "–"
            ]
            Repeater {
                model: table.columns.length
                Label {
                    required property int index
                    width: table.columns[index].width
                    font.pixelSize: 12
                    elide: Text.ElideRight
                    text: row.cells[index]
                }
            }
            ToolButton {
                visible: row.slot > 0 && row.workerState === "serving"
                height: 18
                font.pixelSize: 11
                text: qsTr("kill")
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Send SIGKILL to worker %1 (pid %2): the supervisor replaces it").arg(row.slot).arg(row.pid)
                onClicked: table.model.killWorker(row.slot)
            }
        }
    }
}
