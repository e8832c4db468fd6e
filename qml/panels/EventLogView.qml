import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore.Console

// The newest entries of the server's event log (starts, mode switches, worker crashes...).
ColumnLayout {
    id: log

    property var entries: []

    spacing: 2

    Label {
        text: qsTr("Events")
        font.bold: true
    }
    ListView {
        Layout.fillWidth: true
        Layout.fillHeight: true
        clip: true
        model: log.entries
        ScrollBar.vertical: ScrollBar {}
        delegate: Label {
            required property var modelData
            width: ListView.view.width
            wrapMode: Text.Wrap // a mode switch names mode, workers, threads and policy: all of it shows
            textFormat: Text.PlainText // the server's words, never markup
            font.pixelSize: 12
            text: "%1  %2  %3".arg(new Date(modelData.time_ms).toLocaleTimeString(Qt.locale(), "HH:mm:ss"))
                              .arg(modelData.kind).arg(modelData.text)
        }
    }
    Timer {
        interval: 1000
        repeat: true
        running: true
        triggeredOnStart: true
        onTriggered: log.entries = ConsoleBackend.events(50)
    }
}
