import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore.Console

// What needs the dispatcher now, most urgent first: the crash-loop breaker, workers restarting,
// riders waiting too long, cars that stopped reporting. A click brings the item into view.
Pane {
    id: list

    required property OperationsKpis kpis
    readonly property bool dark: palette.window.hslLightness < 0.5
    property bool expanded: true

    // kind: "breaker", "worker", "waiting_booking", "stale_car"
    signal activated(string kind, var bookingId, int carId, int workerIndex, bool hasPosition, real lat, real lng)
    signal dispatchRequested(var bookingId)

    function colourOf(kind) {
        if (kind === "breaker" || kind === "worker")
            return dark ? "#ff8a80" : "#c62828"
        return kind === "waiting_booking" ? (dark ? "#ffcc80" : "#b35c00") : palette.windowText
    }
    function symbolOf(kind) {
        return { breaker: "⚠", worker: "↻", waiting_booking: "◷", stale_car: "◌" }[kind] || "•"
    }

    padding: 6
    opacity: 0.95

    ColumnLayout {
        anchors.fill: parent
        spacing: 4

        RowLayout {
            Layout.fillWidth: true
            ToolButton {
                objectName: "alertsToggle"
                text: (list.expanded ? "▾ " : "▸ ") + qsTr("Alerts")
                font.bold: true
                onClicked: list.expanded = !list.expanded
            }
            Label {
                objectName: "alertCount"
                text: list.kpis.alerts.count + list.kpis.alertsNotShown
                color: list.kpis.alerts.count > 0 ? "white" : palette.windowText
                font.bold: true
                leftPadding: 6
                rightPadding: 6
                background: Rectangle {
                    radius: height / 2
                    color: list.kpis.alerts.count > 0 ? "#c62828" : "transparent"
                    border.color: palette.mid
                    border.width: list.kpis.alerts.count > 0 ? 0 : 1
                }
            }
            Item { Layout.fillWidth: true }
        }

        Label {
            visible: list.expanded && list.kpis.alerts.count === 0
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            opacity: 0.7
            text: qsTr("All clear. Alerts: a rider waiting over %1 min, a car silent over %2 s, a worker restarting, the crash-loop breaker.")
                  .arg(Math.round(list.kpis.waitingAlertS / 60)).arg(Math.round(list.kpis.staleCarS))
        }

        ListView {
            id: view
            objectName: "alertList"
            visible: list.expanded && count > 0
            Layout.fillWidth: true
            Layout.preferredHeight: Math.min(contentHeight, 220)
            clip: true
            model: list.kpis.alerts
            ScrollBar.vertical: ScrollBar {}
            delegate: ItemDelegate {
                id: row
                required property string kind
                required property string alertText
                required property var bookingId
                required property int carId
                required property int workerIndex
                required property bool hasPosition
                required property real lat
                required property real lng
                width: ListView.view.width
                padding: 3
                leftPadding: 4
                contentItem: RowLayout {
                    spacing: 6
                    Label {
                        text: list.symbolOf(row.kind)
                        color: list.colourOf(row.kind)
                    }
                    Label {
                        Layout.fillWidth: true
                        textFormat: Text.PlainText
                        text: row.alertText
                        color: list.colourOf(row.kind)
                        elide: Text.ElideRight
                    }
                    Button {
                        visible: row.kind === "waiting_booking"
                        text: qsTr("Dispatch…")
                        flat: true
                        padding: 2
                        ToolTip.visible: hovered
                        ToolTip.text: qsTr("Pick a car on the map for booking #%1").arg(row.bookingId)
                        onClicked: list.dispatchRequested(row.bookingId)
                    }
                }
                ToolTip.visible: hovered
                ToolTip.delay: 600
                ToolTip.text: row.hasPosition ? qsTr("%1 — click to show it on the map").arg(row.alertText)
                                              : qsTr("%1 — click for the Server panel").arg(row.alertText)
                onClicked: list.activated(row.kind, row.bookingId, row.carId, row.workerIndex, row.hasPosition,
                                          row.lat, row.lng)
            }
        }
        Label {
            visible: list.expanded && list.kpis.alertsNotShown > 0
            text: qsTr("… and %n more", "", list.kpis.alertsNotShown)
            opacity: 0.7
        }
    }
}
