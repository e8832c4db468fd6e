import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore.Console

// Manual dispatch on the map: with a booking picked, the next car clicked gets it (through
// POST /admin/v1/bookings/{id}/reassign); the server's answer — or its refusal, e.g.
// "409 car_not_available" — stays here until closed.
Pane {
    id: bar

    required property ManualDispatch dispatch
    // The booking selected in the bookings panel: offered for dispatch (0: none).
    property var selectedBookingId: 0
    readonly property bool dark: palette.window.hslLightness < 0.5
    readonly property bool picking: dispatch.bookingId > 0
    // The widest the bar may be (it sits between the legend and the zoom buttons).
    property real maxWidth: 520

    visible: picking || dispatch.message !== "" || selectedBookingId > 0
    padding: 6
    opacity: 0.96

    background: Rectangle {
        radius: 4
        color: palette.window
        border.width: bar.dispatch.failed ? 2 : 1
        border.color: bar.dispatch.failed ? (bar.dark ? "#ff8a80" : "#c62828")
                                          : bar.picking ? "#d61f69" : palette.mid
    }

    // The prompt (or the offer) on one line, the server's answer under it, wrapped.
    contentWidth: Math.min(content.implicitWidth, bar.maxWidth - bar.leftPadding - bar.rightPadding)
    ColumnLayout {
        id: content
        anchors.fill: parent
        spacing: 4
        RowLayout {
            visible: bar.picking || bar.selectedBookingId > 0
            spacing: 8
            Label {
                objectName: "dispatchPrompt"
                visible: bar.picking
                text: bar.dispatch.busy ? qsTr("Dispatching booking #%1…").arg(bar.dispatch.bookingId)
                                        : qsTr("Click a car on the map to give it booking #%1").arg(bar.dispatch.bookingId)
                font.bold: true
            }
            Button {
                objectName: "dispatchStart"
                visible: !bar.picking && bar.selectedBookingId > 0
                text: qsTr("Dispatch booking #%1 to a car…").arg(bar.selectedBookingId)
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Then click the car on the map (Ctrl+D)")
                onClicked: bar.dispatch.pick(bar.selectedBookingId)
            }
            Item { Layout.fillWidth: true }
            Button {
                visible: bar.picking
                text: qsTr("Stop")
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Stop manual dispatch (Esc)")
                onClicked: bar.dispatch.cancel()
            }
        }
        RowLayout {
            visible: bar.dispatch.message !== "" && !bar.dispatch.busy
            spacing: 8
            Label {
                objectName: "dispatchMessage"
                visible: parent.visible
                Layout.fillWidth: true
                Layout.maximumWidth: bar.maxWidth - bar.leftPadding - bar.rightPadding - 40
                wrapMode: Text.Wrap
                textFormat: Text.PlainText // the server's answer, never markup
                text: bar.dispatch.message
                color: bar.dispatch.failed ? (bar.dark ? "#ff8a80" : "#c62828") : (bar.dark ? "#8fd19e" : "#1b7a36")
            }
            ToolButton {
                visible: !bar.picking
                text: "×"
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Close")
                onClicked: bar.dispatch.cancel()
            }
        }
    }
}
