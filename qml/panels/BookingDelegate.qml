import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// One booking in the list: state, rider, car, what the rider waits for (the car's ETA, the car at
// the pickup) or the fare; reassign (while it waits for its car) and cancel (only where the server
// accepts one: assigned or arriving, not on the trip).
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
    required property bool canCancel
    property string currency: ""
    property bool selected: false
    readonly property int buttonWidth: 30

    signal cancelRequested()
    signal reassignRequested()

    // The right-hand note: the pickup ETA while the car drives there, nothing to wait for once it
    // is there or the rider is aboard (the ETA was the stale pickup one), the fare at the end.
    function note() {
        switch (bookingState) {
        case "requested":
        case "assigned":
            return qsTr("ETA %1").arg(etaSeconds < 60 ? qsTr("%1 s").arg(etaSeconds)
                                                      : qsTr("%1 min").arg(Math.round(etaSeconds / 60)))
        case "arriving": return qsTr("car at pickup")
        case "on_trip": return qsTr("rider aboard")
        }
        return fare > 0 ? qsTr("fare %1 %2").arg(fare.toFixed(2)).arg(currency) : ""
    }
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
                Label { objectName: "stateLabel"; textFormat: Text.PlainText; text: delegate.bookingState.replace("_", " ") }
                Item { Layout.fillWidth: true }
                Label { objectName: "noteLabel"; text: delegate.note() }
            }
            Label {
                Layout.fillWidth: true
                elide: Text.ElideRight
                opacity: 0.75
                // The rider id is whatever the rider sent: never rich text (an <img> would be fetched).
                textFormat: Text.PlainText
                text: qsTr("%1 · car #%2").arg(delegate.rider).arg(delegate.carId)
            }
        }
        // A fixed slot for the buttons: the notes stay in one column whichever buttons a row offers.
        Item {
            Layout.preferredWidth: 2 * delegate.buttonWidth + 2
            Layout.fillHeight: true
            Row {
                anchors.right: parent.right
                anchors.verticalCenter: parent.verticalCenter
                spacing: 2
                ToolButton {
                    objectName: "reassignButton"
                    visible: delegate.bookingState === "assigned" || delegate.bookingState === "arriving"
                    width: delegate.buttonWidth
                    text: "⇄"
                    ToolTip.visible: hovered
                    ToolTip.text: qsTr("Reassign booking #%1 to the nearest available car (Ctrl+R)").arg(delegate.bookingId)
                    onClicked: delegate.reassignRequested()
                }
                ToolButton {
                    objectName: "cancelButton"
                    visible: delegate.canCancel
                    width: delegate.buttonWidth
                    text: "✕"
                    ToolTip.visible: hovered
                    ToolTip.text: qsTr("Cancel booking #%1 (Del)").arg(delegate.bookingId)
                    onClicked: delegate.cancelRequested()
                }
            }
        }
    }
}
