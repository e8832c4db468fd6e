import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore.Console

// The operations view over the city map: the surge heat layer (toggle; drawn in the map's overlay
// slot, under the names and cars), the alert list, and manual dispatch (pick a booking, click a
// car). Put inside CityMap, filling it.
Item {
    id: overlay

    required property Item map // CityMap.qml
    required property OperationsKpis kpis
    required property ManualDispatch dispatch
    property var selectedBookingId: 0
    property alias surgeShown: surgeToggle.checked

    // An alert was clicked (after the map centred on it, if it has a place).
    signal alertActivated(string kind, var bookingId, int carId, int workerIndex)

    MapFocus {
        id: focus
        map: overlay.map
    }

    // Manual dispatch: while a booking is picked, a click on a car gives it the booking.
    Connections {
        target: focus.cityMap
        function onClicked(carId) {
            if (carId > 0 && overlay.dispatch.bookingId > 0)
                overlay.dispatch.assignTo(carId)
        }
    }

    // Drawn in the map's overlay slot: over the streets, under the street names and the cars.
    SurgeHeatLayer {
        id: surge
        objectName: "surgeLayer"
        parent: overlay.map.overlayItem
        anchors.fill: parent
        backend: ConsoleBackend
        map: overlay.map
        visible: surgeToggle.checked
    }

    DispatchBar {
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.top: parent.top
        anchors.topMargin: 10
        dispatch: overlay.dispatch
        selectedBookingId: overlay.selectedBookingId
        maxWidth: Math.max(240, overlay.width - 2 * 170)
    }

    ColumnLayout {
        anchors.left: parent.left
        anchors.bottom: parent.bottom
        anchors.margins: 10
        width: Math.min(440, overlay.width * 0.45)
        spacing: 6

        Pane {
            padding: 4
            opacity: 0.95
            RowLayout {
                Switch {
                    id: surgeToggle
                    objectName: "surgeToggle"
                    text: qsTr("Surge heat")
                    ToolTip.visible: hovered
                    ToolTip.text: qsTr("Tint the pricing cells whose fare multiplier is above 1 (yellow: a little, red: at the cap)")
                }
                Label {
                    visible: surgeToggle.checked
                    text: surge.surgingCells > 0 ? qsTr("highest ×%1 in %n cell(s)", "", surge.surgingCells)
                                                   .arg(surge.highestSurge.toFixed(2))
                                                 : qsTr("no surge now")
                    opacity: 0.8
                }
            }
        }

        AlertList {
            Layout.fillWidth: true
            kpis: overlay.kpis
            onDispatchRequested: bookingId => overlay.dispatch.pick(bookingId)
            onActivated: (kind, bookingId, carId, workerIndex, hasPosition, lat, lng) => {
                if (hasPosition)
                    focus.centreOn(lat, lng)
                overlay.alertActivated(kind, bookingId, carId, workerIndex)
            }
        }
    }
}
