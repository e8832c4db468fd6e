import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore.Console

// Details of the clicked car, refreshed twice a second while open.
Popup {
    id: popup

    property int carId: 0
    property var info: ({})

    function openFor(id, x, y) {
        carId = id
        refresh()
        popup.x = Math.min(x + 14, parent.width - width - 8)
        popup.y = Math.min(y + 14, parent.height - height - 8)
        open()
    }
    function refresh() { info = ConsoleBackend.carInfo(carId) }
    function ago(ms) {
        if (!ms)
            return "–"
        const s = Math.max(0, (Date.now() - ms) / 1000)
        return s < 1 ? qsTr("just now") : qsTr("%1 s ago").arg(s.toFixed(0))
    }

    padding: 10
    closePolicy: Popup.CloseOnEscape | Popup.CloseOnPressOutsideParent

    Timer {
        interval: 500
        repeat: true
        running: popup.opened
        onTriggered: popup.refresh()
    }

    GridLayout {
        columns: 2
        columnSpacing: 10
        rowSpacing: 2
        Label { text: qsTr("Car"); font.bold: true }
        Label { objectName: "carIdValue"; text: "#" + popup.carId; font.bold: true }
        Label { text: qsTr("State") }
        Label { text: popup.info.state ?? "–" }
        Label { text: qsTr("Speed") }
        Label { text: popup.info.speedKmh !== undefined ? qsTr("%1 km/h").arg(popup.info.speedKmh.toFixed(0)) : "–" }
        Label { text: qsTr("Booking") }
        Label { text: popup.info.bookingId ? "#" + popup.info.bookingId : qsTr("none") }
        Label { text: qsTr("Updated") }
        Label { text: popup.ago(popup.info.updatedMs) }
    }
}
