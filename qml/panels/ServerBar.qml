import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore.Console

// The server's address (click opens the rider page), its mode and live request figures.
ToolBar {
    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 8
        anchors.rightMargin: 8
        spacing: 16

        Label {
            objectName: "urlLabel"
            text: "<a href=\"%1\">%1</a>".arg(ConsoleBackend.url)
            textFormat: Text.StyledText
            onLinkActivated: link => Qt.openUrlExternally(link)
            HoverHandler {
                id: urlHover
                cursorShape: Qt.PointingHandCursor
            }
            ToolTip.visible: urlHover.hovered
            ToolTip.text: qsTr("Open the rider page in the browser")
        }
        Label {
            objectName: "modeLabel"
            text: qsTr("mode: %1").arg(ConsoleBackend.mode)
        }
        Label {
            objectName: "requestsLabel"
            text: qsTr("requests: %1").arg(ConsoleBackend.requestsServed.toLocaleString(Qt.locale(), "f", 0))
        }
        Label {
            text: qsTr("%1 req/s").arg(ConsoleBackend.requestsPerSecond.toFixed(0))
            opacity: 0.7
        }
        Item { Layout.fillWidth: true }
        Label {
            text: qsTr("%1 cars").arg(ConsoleBackend.carCount)
            opacity: 0.7
        }
    }
}
