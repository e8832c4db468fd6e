import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore.Console

// Which colour is which car state; uses the map's own colours so they cannot drift apart.
Pane {
    id: legend

    required property CityMapItem map
    required property int carsShown
    required property var carsByState

    padding: 8
    opacity: 0.92

    ColumnLayout {
        spacing: 3
        Label {
            objectName: "carCount"
            // Spelled out: "%n car(s)" shows as such without an English translation loaded.
            text: legend.carsShown === 1 ? qsTr("1 car") : qsTr("%1 cars").arg(legend.carsShown.toLocaleString(Qt.locale(), "f", 0))
            font.bold: true
        }
        Repeater {
            model: [
                { label: qsTr("available"), color: legend.map.availableColor, count: legend.carsByState[1] },
                { label: qsTr("to pickup"), color: legend.map.toPickupColor, count: legend.carsByState[2] },
                { label: qsTr("waiting"), color: legend.map.toPickupColor, count: legend.carsByState[4] },
                { label: qsTr("on trip"), color: legend.map.onTripColor, count: legend.carsByState[3] },
                { label: qsTr("offline"), color: legend.map.offlineColor, count: legend.carsByState[0] }
            ]
            delegate: RowLayout {
                required property var modelData
                Layout.fillWidth: true
                spacing: 6
                Rectangle {
                    width: 12
                    height: 12
                    radius: 2
                    color: parent.modelData.color
                }
                Label {
                    Layout.fillWidth: true
                    text: parent.modelData.label
                }
                Label {
                    Layout.leftMargin: 10
                    horizontalAlignment: Text.AlignRight
                    text: parent.modelData.count
                    opacity: 0.8
                }
            }
        }
    }
}
