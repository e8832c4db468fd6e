import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore.Console

// The server's address (click opens the rider page), the admin token (for /admin/* from other
// machines or with --trust-loopback off; hidden until asked, copied with one click), its mode
// and live request figures.
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
        RowLayout {
            spacing: 2
            visible: ConsoleBackend.adminToken.length > 0
            Label {
                id: tokenLabel
                objectName: "adminTokenLabel"
                property bool revealed: false
                text: qsTr("admin token: %1").arg(revealed ? ConsoleBackend.adminToken
                                                           : ConsoleBackend.adminToken.slice(0, 4) + "…")
                font.family: revealed ? "monospace" : Qt.application.font.family
            }
            ToolButton {
                text: tokenLabel.revealed ? qsTr("Hide") : qsTr("Show")
                onClicked: tokenLabel.revealed = !tokenLabel.revealed
            }
            ToolButton {
                objectName: "copyAdminToken"
                text: qsTr("Copy")
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Copy the admin token: Authorization: Bearer <token>")
                onClicked: {
                    clipboard.text = ConsoleBackend.adminToken
                    clipboard.selectAll()
                    clipboard.copy()
                    clipboard.text = ""
                }
            }
            // QML has no clipboard API of its own: an invisible editor copies for us.
            TextEdit {
                id: clipboard
                visible: false
            }
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
