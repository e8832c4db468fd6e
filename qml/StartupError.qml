import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore.Console

// Shown instead of the console when the embedded server cannot start (e.g. the port is in use).
ApplicationWindow {
    id: window
    width: 520
    height: 220
    visible: true
    title: qsTr("TaxiCore — server could not start")

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 20
        spacing: 12

        Label {
            text: qsTr("The taxi server could not start")
            font.bold: true
            font.pixelSize: 18
        }
        Label {
            objectName: "errorText"
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            text: ConsoleBackend.errorString
        }
        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            opacity: 0.7
            text: qsTr("Pick another port with --port (0 chooses a free one) or another --data-dir, or stop the program using it.")
        }
        Item { Layout.fillHeight: true }
        Button {
            Layout.alignment: Qt.AlignRight
            text: qsTr("Quit")
            focus: true
            onClicked: Qt.exit(1)
            Keys.onReturnPressed: Qt.exit(1)
        }
    }
}
