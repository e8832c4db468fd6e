import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore.Console

// The live map with its legend, scale bar, attribution and the clicked car's details.
// Layers, bottom up: streets (cached texture), `overlays` (extra layers other features add,
// e.g. a heat map), street names, cars and the selection (CityMapItem), then the controls.
Rectangle {
    id: root

    property alias selectedCarId: mapItem.selectedCarId
    property alias selectedBookingId: mapItem.selectedBookingId
    readonly property alias carsShown: mapItem.carsShown
    readonly property bool dark: palette.window.hslLightness < 0.5
    // The map's view, for overlays: map.toScreen(lat, lng), map.coordinateAt(x, y),
    // map.showLocation(lat, lng), and map.viewChanged() when it pans or zooms.
    readonly property alias map: mapItem
    // Items drawn over the streets and under the cars (overlays: [HeatLayer {...}]); they fill
    // the map and get no input (the map above takes it).
    property alias overlays: overlaySlot.data
    // The same slot as an item, for a layer declared elsewhere (parent: map.overlayItem).
    readonly property alias overlayItem: overlaySlot

    // A click on a car (after it is selected and its details open); carId > 0.
    signal carClicked(int carId)

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

    Item {
        id: overlaySlot
        objectName: "overlays"
        anchors.fill: parent
    }

    StreetLabelsItem {
        id: streetLabels
        objectName: "streetLabels"
        anchors.fill: parent
        map: mapItem
        textColor: root.dark ? "#d8d4cc" : "#3a3631"
        haloColor: root.dark ? "#e61f2326" : "#e6f4f1ea"
        // The controls drawn over the map: no name under them.
        reservedAreas: [
            Qt.rect(legend.x, legend.y, legend.width, legend.height),
            Qt.rect(zoomButtons.x, zoomButtons.y, zoomButtons.width, zoomButtons.height),
            Qt.rect(scaleBar.x, scaleBar.y, scaleBar.width, scaleBar.height),
            Qt.rect(attribution.x, attribution.y, attribution.width, attribution.height)
        ]
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
        markerHaloColor: root.dark ? "#cc101316" : "#e6ffffff"
        clusterColor: root.dark ? "#e6dfe6ea" : "#e62b363d"
        clusterTextColor: root.dark ? "#1b2024" : "#ffffff"
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
            if (carId > 0) {
                carPopup.openFor(carId, x, y)
                root.carClicked(carId)
            } else {
                carPopup.close()
            }
        }
    }

    MapLegend {
        id: legend
        anchors.left: parent.left
        anchors.top: parent.top
        anchors.margins: 10
        map: mapItem
        carsShown: mapItem.carsShown
        carsByState: mapItem.carsByState
    }

    Column {
        id: zoomButtons
        anchors.right: parent.right
        anchors.top: parent.top
        anchors.margins: 10
        spacing: 4
        RoundButton { text: "+"; onClicked: root.zoomIn(); ToolTip.text: qsTr("Zoom in (Ctrl++)"); ToolTip.visible: hovered }
        RoundButton { text: "−"; onClicked: root.zoomOut(); ToolTip.text: qsTr("Zoom out (Ctrl+-)"); ToolTip.visible: hovered }
        RoundButton { text: "⤢"; onClicked: root.fit(); ToolTip.text: qsTr("Whole city (Ctrl+0)"); ToolTip.visible: hovered }
    }

    // Bottom right, over the attribution: the bottom left is the operations view's (alerts).
    MapScaleBar {
        id: scaleBar
        objectName: "scaleBar"
        anchors.right: parent.right
        anchors.bottom: attribution.top
        anchors.rightMargin: 10
        anchors.bottomMargin: 4
        map: mapItem
        ink: root.dark ? "#e6e6e6" : "#333333"
    }

    Label {
        id: attribution
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
