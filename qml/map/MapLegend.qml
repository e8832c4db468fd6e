import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore.Console

// Which colour is which car state; uses the map's own colours so they cannot drift apart.
Pane {
    id: legend

    required property CityMapItem map
    required property int carsShown

    padding: 8
    opacity: 0.92

    ColumnLayout {
        spacing: 3
        Label {
            text: qsTr("%n car(s)", "", legend.carsShown)
            font.bold: true
        }
        Repeater {
            model: [
                { label: qsTr("available"), color: legend.map.availableColor },
                { label: qsTr("to pickup"), color: legend.map.toPickupColor },
                { label: qsTr("on trip"), color: legend.map.onTripColor },
                { label: qsTr("offline"), color: legend.map.offlineColor }
            ]
            delegate: RowLayout {
                required property var modelData
                spacing: 6
                Rectangle {
                    width: 12
                    height: 12
                    radius: 2
                    color: parent.modelData.color
                }
                Label { text: parent.modelData.label }
            }
        }
    }
}
