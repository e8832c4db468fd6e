import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// The serving processes: pid, state, req/s, p99, CPU, RSS, restarts, heartbeat; "kill" sends
// SIGKILL to a worker process so the supervisor's recovery can be watched.
ColumnLayout {
    id: table

    required property var model

    readonly property var columns: [
        { title: qsTr("#"), width: 22 }, { title: qsTr("pid"), width: 52 }, { title: qsTr("state"), width: 58 },
        { title: qsTr("req/s"), width: 50 }, { title: qsTr("p99"), width: 44 }, { title: qsTr("CPU"), width: 40 },
        { title: qsTr("RSS"), width: 40 }, { title: qsTr("rst"), width: 26 }, { title: qsTr("hb"), width: 34 }
    ]

    spacing: 1

    Label { text: qsTr("Processes"); font.bold: true }
    Row {
        Repeater {
            model: table.columns
            Label {
                required property var modelData
                width: modelData.width
                text: modelData.title
                font.bold: true
                font.pixelSize: 12
            }
        }
    }
    ListView {
        objectName: "workerTable"
        Layout.fillWidth: true
        Layout.fillHeight: true
        clip: true
        model: table.model
        ScrollBar.vertical: ScrollBar {}
        delegate: Row {
            id: row
            required property int slot
            required property int pid
            required property string workerState
            required property double requestsPerSecond
            required property double p99Ms
            required property double cpuPercent
            required property double rssMb
            required property int restarts
            required property var heartbeatAgeMs

            readonly property var cells: [
                slot, pid, workerState, requestsPerSecond.toFixed(0),
                p99Ms > 0 ? (p99Ms < 10 ? p99Ms.toFixed(2) : p99Ms.toFixed(0)) : "–",
                cpuPercent.toFixed(0) + "%", rssMb.toFixed(0) + "M", restarts,
                heartbeatAgeMs < 10000 ? (heartbeatAgeMs / 1000).toFixed(1) + "s" : "–"
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
                onClicked: table.model.killWorker(row.slot)
            }
        }
    }
}
