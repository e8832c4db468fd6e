import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore.Console

// Shown instead of the console when the embedded server cannot start (a port in use, a missing
// city file, a data directory another server owns...): a console started from the desktop menu
// has no terminal, so stderr alone would leave the user with nothing.
ApplicationWindow {
    id: window
    width: 560
    height: 280
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
        // Selectable, so the message can be copied into a bug report or a search.
        TextArea {
            objectName: "errorText"
            Layout.fillWidth: true
            readOnly: true
            selectByMouse: true
            wrapMode: Text.Wrap
            textFormat: TextEdit.PlainText // paths and the server's words, never markup
            text: ConsoleBackend.errorString
        }
        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            opacity: 0.7
            text: qsTr("A port in use: pick another with --port (0 chooses a free one). A data directory "
                       + "another server owns: stop it or pass another --data-dir. A city or tariff file: "
                       + "check the path given to --city or --tariff. taxicore --help lists every flag.")
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
