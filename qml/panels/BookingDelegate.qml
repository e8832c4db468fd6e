import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// One booking in the list: state, rider, car, ETA or fare; reassign (while it waits for its car)
// and cancel buttons while it is open.
ItemDelegate {
    id: delegate

    required property int index
    required property var bookingId
    required property string bookingState
    required property bool isOpen
    required property string rider
    required property int carId
    required property int etaSeconds
    required property double fare
    property bool selected: false

    signal cancelRequested()
    signal reassignRequested()

    function stateColor(s) {
        switch (s) {
        case "assigned":
        case "arriving": return "#f08c10"
        case "on_trip": return "#2f6fd6"
        case "completed": return "#2ea04a"
        case "cancelled": return "#c0392b"
        case "expired": return "#8e5a9b" // nobody boarded within the pickup timeout
        }
        return "#8a8a8a"
    }

    width: ListView.view ? ListView.view.width : implicitWidth
    highlighted: selected
    padding: 6

    contentItem: RowLayout {
        spacing: 8
        Rectangle {
            Layout.preferredWidth: 6
            Layout.fillHeight: true
            radius: 3
            color: delegate.stateColor(delegate.bookingState)
        }
        ColumnLayout {
            Layout.fillWidth: true
            spacing: 0
            RowLayout {
                Label { text: "#" + delegate.bookingId; font.bold: true }
                Label { objectName: "stateLabel"; text: delegate.bookingState.replace("_", " ") }
                Item { Layout.fillWidth: true }
                Label {
                    text: delegate.isOpen ? qsTr("ETA %1").arg(delegate.etaSeconds < 60
                                                                 ? qsTr("%1 s").arg(delegate.etaSeconds)
                                                                 : qsTr("%1 min").arg(Math.round(delegate.etaSeconds / 60)))
                                          : (delegate.fare > 0 ? qsTr("fare %1").arg(delegate.fare.toFixed(2)) : "")
                }
            }
            Label {
                Layout.fillWidth: true
                elide: Text.ElideRight
                opacity: 0.75
                text: qsTr("%1 · car #%2").arg(delegate.rider).arg(delegate.carId)
            }
        }
        ToolButton {
            objectName: "reassignButton"
            visible: delegate.bookingState === "assigned" || delegate.bookingState === "arriving"
            text: "⇄"
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Reassign booking #%1 to the nearest available car (Ctrl+R)").arg(delegate.bookingId)
            onClicked: delegate.reassignRequested()
        }
        ToolButton {
            objectName: "cancelButton"
            visible: delegate.isOpen
            text: "✕"
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Cancel booking #%1 (Del)").arg(delegate.bookingId)
            onClicked: delegate.cancelRequested()
        }
    }
}
