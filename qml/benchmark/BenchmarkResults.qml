import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// Benchmark results, newest first, in the columns of the seed write-ups; a ⚠ marks a
// client-bound run (it measured the load generator, not the server).
ColumnLayout {
    id: table

    required property var results

    signal exportRequested()
    signal clearRequested()

    readonly property var columns: [
        { key: "mode", title: qsTr("mode"), width: 62 },
        { key: "concurrency", title: qsTr("c"), width: 40 },
        { key: "completed", title: qsTr("done"), width: 52 },
        { key: "rps", title: qsTr("req/s"), width: 56 },
        { key: "p50Ms", title: qsTr("p50"), width: 44 },
        { key: "p99Ms", title: qsTr("p99"), width: 44 },
        { key: "maxMs", title: qsTr("max"), width: 44 },
        { key: "timeouts", title: qsTr("t/o"), width: 30 }
    ]

    function cell(row, key) {
        const v = row[key]
        if (typeof v !== "number")
            return v === undefined ? "" : v
        return key.endsWith("Ms") ? v.toFixed(v < 10 ? 2 : 0) : v.toFixed(0)
    }

    spacing: 2

    RowLayout {
        Label { text: qsTr("Results"); font.bold: true; Layout.fillWidth: true }
        ToolButton { text: qsTr("Export…"); enabled: table.results.length > 0; onClicked: table.exportRequested() }
        ToolButton { text: qsTr("Clear"); enabled: table.results.length > 0; onClicked: table.clearRequested() }
    }
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
        objectName: "benchmarkResults"
        Layout.fillWidth: true
        Layout.fillHeight: true
        clip: true
        model: table.results
        ScrollBar.vertical: ScrollBar {}
        delegate: Row {
            id: resultRow
            required property var modelData
            Repeater {
                model: table.columns
                Label {
                    required property var modelData
                    width: modelData.width
                    font.pixelSize: 12
                    elide: Text.ElideRight
                    text: table.cell(resultRow.modelData, modelData.key)
                }
            }
            Label {
                visible: resultRow.modelData.clientBound === true
                text: "⚠"
                color: "#c0392b"
                ToolTip.visible: hover.hovered
                ToolTip.text: qsTr("Client-bound: %1").arg(resultRow.modelData.clientBoundReason)
                HoverHandler { id: hover }
            }
        }
    }
}
