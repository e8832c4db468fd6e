import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore
import TaxiCore.Console

// The dispatcher console window: server status on top, the live map below.
ApplicationWindow {
    id: window
    width: 1280
    height: 800
    minimumWidth: 960
    minimumHeight: 600
    visible: true
    title: qsTr("TaxiCore — %1").arg(ConsoleBackend.url)

    header: ServerBar {}

    CityMap {
        id: cityMap
        anchors.fill: parent
    }
}
