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

    // Each header a word with its unit; hovering it says what the column measures.
    readonly property var columns: [
        { key: "mode", title: qsTr("mode"), width: 58, tip: qsTr("The server's execution model during the run") },
        { key: "concurrency", title: qsTr("connections"), width: 78, tip: qsTr("Concurrent client connections") },
        { key: "completed", title: qsTr("requests"), width: 56, tip: qsTr("Requests answered") },
        { key: "rps", title: qsTr("req/s"), width: 40, tip: qsTr("Requests answered per second") },
        { key: "p50Ms", title: qsTr("p50 ms"), width: 46, tip: qsTr("Median latency, milliseconds") },
        { key: "p99Ms", title: qsTr("p99 ms"), width: 46, tip: qsTr("99th percentile latency, milliseconds") },
        { key: "maxMs", title: qsTr("max ms"), width: 48, tip: qsTr("Slowest answer, milliseconds") },
        { key: "timeouts", title: qsTr("timeouts"), width: 56, tip: qsTr("Requests not answered in time") }
    ]
    readonly property int columnGap: 2

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
        spacing: table.columnGap
        Repeater {
            model: table.columns
            Label {
                required property var modelData
                objectName: "resultHeader"
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
        objectName: "benchmarkResults"
        Layout.fillWidth: true
        Layout.fillHeight: true
        clip: true
        model: table.results
        ScrollBar.vertical: ScrollBar {}
        delegate: Row {
            id: resultRow
            spacing: table.columnGap
            required property var modelData
            Repeater {
                model: table.columns
                Label {
                    required property var modelData
                    width: modelData.width
                    font.pixelSize: 12
                    elide: Text.ElideRight
                    textFormat: Text.PlainText // the target URL among them
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
