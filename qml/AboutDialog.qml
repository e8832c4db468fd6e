import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore

// Help → About (F1): what this is, which version, on which Qt, and the licences — including
// the attribution the OpenStreetMap licence requires for the bundled city.
Dialog {
    id: dialog
    objectName: "aboutDialog"
    title: qsTr("About TaxiCore")
    modal: true
    standardButtons: Dialog.Close
    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(460, parent ? parent.width - 40 : 460)

    ColumnLayout {
        anchors.fill: parent
        spacing: 10

        Label {
            text: qsTr("TaxiCore %1").arg(AboutInfo.version)
            objectName: "aboutVersion"
            font.bold: true
            font.pixelSize: 18
        }
        Label {
            text: qsTr("Taxi dispatcher console with an embedded booking server")
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
        Label {
            objectName: "aboutQtVersion"
            text: AboutInfo.qtVersion === AboutInfo.qtBuildVersion
                  ? qsTr("Qt %1").arg(AboutInfo.qtVersion)
                  : qsTr("Qt %1 (built with %2)").arg(AboutInfo.qtVersion).arg(AboutInfo.qtBuildVersion)
        }
        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            textFormat: Text.StyledText
            onLinkActivated: link => Qt.openUrlExternally(link)
            text: qsTr("Map data © <a href=\"https://www.openstreetmap.org/copyright\">OpenStreetMap contributors</a>, "
                       + "ODbL 1.0.")
        }
        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            text: qsTr("TaxiCore is released under the MIT licence; it uses Qt under the LGPL 3.")
        }
    }
}
