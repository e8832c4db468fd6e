import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore.Console

// The live list of open and recent bookings: filter, select (highlighted on the map), cancel.
ColumnLayout {
    id: panel

    property var selectedBookingId: 0
    property int selectedCarId: 0
    readonly property alias model: bookings

    function focusFilter() { filterField.forceActiveFocus() }
    function select(bookingId, carId) {
        selectedBookingId = bookingId
        selectedCarId = carId
    }
    function clearSelection() { select(0, 0) }
    function cancelSelected() {
        if (selectedBookingId)
            bookings.cancel(selectedBookingId)
    }

    spacing: 6

    BookingListModel {
        id: bookings
        backend: ConsoleBackend
    }

    RowLayout {
        Layout.fillWidth: true
        TextField {
            id: filterField
            objectName: "bookingFilter"
            Layout.fillWidth: true
            placeholderText: qsTr("Filter: rider, #booking, car, state (Ctrl+F)")
            selectByMouse: true
            onTextChanged: bookings.filterText = text
            Keys.onEscapePressed: text = ""
        }
        CheckBox {
            text: qsTr("Open only")
            onToggled: bookings.openOnly = checked
        }
    }

    ListView {
        id: list
        objectName: "bookingList"
        Layout.fillWidth: true
        Layout.fillHeight: true
        clip: true
        model: bookings
        reuseItems: true
        ScrollBar.vertical: ScrollBar {}
        delegate: BookingDelegate {
            selected: bookingId === panel.selectedBookingId
            onClicked: panel.select(bookingId, carId)
            onCancelRequested: bookings.cancel(bookingId)
        }

        Label {
            anchors.centerIn: parent
            width: parent.width - 40
            visible: list.count === 0
            horizontalAlignment: Text.AlignHCenter
            wrapMode: Text.Wrap
            opacity: 0.7
            text: bookings.filterText || bookings.openOnly
                  ? qsTr("No booking matches the filter.")
                  : qsTr("No bookings yet. Riders book at %1").arg(ConsoleBackend.url)
        }
    }
}
