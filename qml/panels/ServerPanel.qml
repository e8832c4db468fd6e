import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore.Console

// The server's execution model and its live request rate.
ColumnLayout {
    id: panel

    spacing: 8

    GroupBox {
        Layout.fillWidth: true
        title: qsTr("Execution model")

        GridLayout {
            anchors.fill: parent
            columns: 2
            enabled: ConsoleBackend.canSwitchMode

            Label { text: qsTr("Mode") }
            ComboBox {
                id: modeBox
                objectName: "modeBox"
                Layout.fillWidth: true
                model: ["single", "pool", "processes"]
                currentIndex: Math.max(0, model.indexOf(ConsoleBackend.mode))
            }
            Label { text: qsTr("Workers") }
            SpinBox {
                Layout.fillWidth: true
                from: 0
                to: 32
                value: ConsoleBackend.workers
                enabled: modeBox.currentText === "processes"
            }
            Label { text: qsTr("Pool threads") }
            SpinBox {
                Layout.fillWidth: true
                from: 0
                to: 64
                value: ConsoleBackend.threads
                enabled: modeBox.currentText === "pool"
            }
            Label { text: qsTr("Policy") }
            ComboBox {
                Layout.fillWidth: true
                model: ["round-robin", "kernel"]
                currentIndex: Math.max(0, model.indexOf(ConsoleBackend.policy))
                enabled: modeBox.currentText === "processes"
            }
            Item { width: 1; height: 1 }
            Button {
                Layout.alignment: Qt.AlignRight
                text: qsTr("Apply")
            }
        }
    }
    Label {
        Layout.fillWidth: true
        visible: !ConsoleBackend.canSwitchMode
        wrapMode: Text.Wrap
        opacity: 0.7
        font.pixelSize: 12
        text: qsTr("Running in %1 mode (0 = one per core). Switching live arrives with the mode controller; until then restart with --mode, --workers, --threads, --policy.").arg(ConsoleBackend.mode)
    }

    RequestRateChart {
        Layout.fillWidth: true
        Layout.fillHeight: true
        Layout.minimumHeight: 220
    }
}
