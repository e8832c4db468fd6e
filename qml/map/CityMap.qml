import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore.Console

// The live map with its legend, attribution and the clicked car's details.
Rectangle {
    id: root

    property alias selectedCarId: mapItem.selectedCarId
    property alias selectedBookingId: mapItem.selectedBookingId
    readonly property alias carsShown: mapItem.carsShown
    readonly property bool dark: palette.window.hslLightness < 0.5

    function zoomIn() { mapItem.zoomAt(mapItem.width / 2, mapItem.height / 2, 1.5) }
    function zoomOut() { mapItem.zoomAt(mapItem.width / 2, mapItem.height / 2, 1 / 1.5) }
    function fit() { mapItem.fitCity() }

    color: dark ? "#1f2326" : "#f4f1ea"
    clip: true

    StreetsItem {
        id: streets
        objectName: "streets"
        anchors.fill: parent
        map: mapItem
        majorRoadColor: root.dark ? "#8c7a50" : "#d9bf80"
        minorRoadColor: root.dark ? "#50565c" : "#b9b4aa"
        gridColor: root.dark ? "#2c3135" : "#e2ded5"
        // Re-rendered only when the view moves; each frame then draws one texture.
        layer.enabled: true
        layer.samples: 4
    }

    CityMapItem {
        id: mapItem
        objectName: "cityMap"
        anchors.fill: parent
        backend: ConsoleBackend
        offlineColor: "#8a8a8a"
        availableColor: "#2ea04a"
        toPickupColor: "#f08c10"
        onTripColor: root.dark ? "#5b9bff" : "#2f6fd6"
        highlightColor: "#d61f69"
        // Pinch (touchpad, touch screen) zooms towards the fingers, like the wheel.
        PinchHandler {
            id: pinch
            target: null
            property real lastScale: 1
            onActiveChanged: lastScale = 1
            onActiveScaleChanged: {
                mapItem.zoomAt(centroid.position.x, centroid.position.y, activeScale / lastScale)
                lastScale = activeScale
            }
        }
        onClicked: (carId, x, y) => {
            selectedCarId = carId
            if (carId > 0)
                carPopup.openFor(carId, x, y)
            else
                carPopup.close()
        }
    }

    MapLegend {
        anchors.left: parent.left
        anchors.top: parent.top
        anchors.margins: 10
        map: mapItem
        carsShown: mapItem.carsShown
        carsByState: mapItem.carsByState
    }

    Column {
        anchors.right: parent.right
        anchors.top: parent.top
        anchors.margins: 10
        spacing: 4
        RoundButton { text: "+"; onClicked: root.zoomIn(); ToolTip.text: qsTr("Zoom in (Ctrl++)"); ToolTip.visible: hovered }
        RoundButton { text: "−"; onClicked: root.zoomOut(); ToolTip.text: qsTr("Zoom out (Ctrl+-)"); ToolTip.visible: hovered }
        RoundButton { text: "⤢"; onClicked: root.fit(); ToolTip.text: qsTr("Whole city (Ctrl+0)"); ToolTip.visible: hovered }
    }

    Label {
        anchors.right: parent.right
        anchors.bottom: parent.bottom
        padding: 3
        leftPadding: 6
        rightPadding: 6
        text: "© OpenStreetMap contributors"
        font.pixelSize: 11
        background: Rectangle { color: root.color; opacity: 0.8 }
    }

    CarPopup {
        id: carPopup
        onClosed: mapItem.selectedCarId = 0
    }
}
