import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// How the last benchmark run ended, where it cannot be missed: a coloured band saying finished,
// stopped or failed, with the run's figures (or the reason) under it.
Rectangle {
    id: outcome

    // "" (nothing run yet), "running", "finished", "stopped" or "failed".
    property string outcomeState: ""
    // The newest result row of the run (BenchmarkRunner.results[0]) once it ended with figures.
    property var result: null
    property int stageCount: 1
    property string mode: ""
    // Why it failed, or what is running.
    property string detail: ""

    // "12,345 requests in 5 s: 2,469 req/s, p50 0.41 ms, p99 2.30 ms, max 9.0 ms, 0 timeouts".
    function summary(r) {
        if (!r)
            return ""
        const ms = v => Number(v).toFixed(v < 10 ? 2 : 0)
        return qsTr("%1 requests: %2 req/s · p50 %3 ms · p99 %4 ms · max %5 ms · %6 timeouts, %7 errors")
            .arg(Number(r.completed).toLocaleString(Qt.locale(), "f", 0))
            .arg(Number(r.rps).toLocaleString(Qt.locale(), "f", 0))
            .arg(ms(r.p50Ms)).arg(ms(r.p99Ms)).arg(ms(r.maxMs))
            .arg(Number(r.timeouts).toFixed(0)).arg(Number(r.errors).toFixed(0))
    }
    function headline() {
        switch (outcomeState) {
        case "running": return qsTr("Running…")
        case "finished":
            return stageCount > 1 ? qsTr("Finished: %1 stages against %2 mode (the last below)").arg(stageCount).arg(mode)
                                  : qsTr("Finished against %1 mode").arg(mode)
        case "stopped": return qsTr("Stopped")
        case "failed": return qsTr("Failed")
        }
        return ""
    }
    readonly property color tint: outcomeState === "finished" ? "#2ea04a"
                                  : outcomeState === "failed" ? "#c0392b"
                                  : outcomeState === "stopped" ? "#d68a1f" : "#2f6fd6"

    visible: outcomeState !== ""
    implicitHeight: column.implicitHeight + 12
    radius: 4
    color: Qt.rgba(tint.r, tint.g, tint.b, 0.12)
    border.color: tint
    border.width: 1

    ColumnLayout {
        id: column
        anchors.fill: parent
        anchors.margins: 6
        spacing: 2
        Label {
            objectName: "outcomeHeadline"
            Layout.fillWidth: true
            text: outcome.headline()
            font.bold: true
            color: outcome.tint
            wrapMode: Text.Wrap
        }
        Label {
            objectName: "outcomeSummary"
            Layout.fillWidth: true
            visible: text !== ""
            wrapMode: Text.Wrap
            textFormat: Text.PlainText // taxicore-bench's words (a target's answer), never markup
            text: outcome.result ? outcome.summary(outcome.result) : outcome.detail
        }
    }
}
