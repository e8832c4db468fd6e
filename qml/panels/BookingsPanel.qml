import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore.Console

// The live list of open and recent bookings: filter, select (highlighted on the map), cancel,
// reassign to another car.
ColumnLayout {
    id: panel

    property var selectedBookingId: 0
    property int selectedCarId: 0
    readonly property alias model: bookings
    // What the last reassign did, for the operator (and the tests).
    property string lastMessage: ""

    function focusFilter() { filterField.forceActiveFocus() }
    function select(bookingId, carId) {
        selectedBookingId = bookingId
        selectedCarId = carId
    }
    function clearSelection() { select(0, 0) }
    // Del: only where the list offers the × (the server refuses a cancel on the trip).
    function cancelSelected() {
        const row = selectedBookingId ? bookings.rowOf(selectedBookingId) : -1
        if (row >= 0 && bookings.data(bookings.index(row, 0), BookingListModel.CanCancelRole))
            bookings.cancel(selectedBookingId)
    }
    // Another car for the booking: `carId`, or with 0 the available one nearest by road.
    function reassign(bookingId, carId) {
        const result = bookings.reassign(bookingId, carId || 0)
        if (result.ok) {
            lastMessage = qsTr("Booking #%1: car #%2 instead of #%3").arg(bookingId).arg(result.carId)
                                                                      .arg(result.previousCarId)
            if (bookingId === selectedBookingId)
                select(bookingId, result.carId)
        } else {
            lastMessage = qsTr("Not reassigned: %1").arg(result.error)
        }
        return result
    }
    function reassignSelected() {
        return selectedBookingId ? reassign(selectedBookingId, 0) : { ok: false, error: qsTr("no booking selected") }
    }
    // Test hook (--reassign-after-ms): selects the newest open booking and reassigns it.
    function reassignNewestOpen() {
        bookings.refresh()
        for (let row = 0; row < bookings.count; ++row) {
            const index = bookings.index(row, 0)
            if (bookings.data(index, BookingListModel.IsOpenRole)) {
                select(bookings.data(index, BookingListModel.BookingIdRole), bookings.data(index, BookingListModel.CarIdRole))
                return reassignSelected()
            }
        }
        return { ok: false, error: qsTr("no open booking") }
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

    Label {
        objectName: "reassignMessage"
        Layout.fillWidth: true
        visible: text !== ""
        wrapMode: Text.Wrap
        text: panel.lastMessage
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
            currency: ConsoleBackend.tariff.currency
            onClicked: panel.select(bookingId, carId)
            onCancelRequested: bookings.cancel(bookingId)
            onReassignRequested: panel.reassign(bookingId, 0)
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
