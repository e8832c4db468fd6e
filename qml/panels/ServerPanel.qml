import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore.Console

// The server's execution model (applied live), its cluster's nodes, its request rate and its event log.
ColumnLayout {
    id: panel

    property string lastResult: ""

    // The tariff and demand dialog (Main.qml owns it).
    signal settingsRequested()

    // Shows what is serving now (after an apply, or a switch through the admin API).
    function syncControls() {
        modeBox.currentIndex = Math.max(0, modeBox.model.indexOf(ConsoleBackend.mode))
        workersBox.value = ConsoleBackend.workers
        threadsBox.value = ConsoleBackend.threads
        policyBox.currentIndex = Math.max(0, policyBox.model.indexOf(ConsoleBackend.policy))
    }
    // An amount of the tariff with its currency ("95 SEK", "13.50 SEK").
    function money(amount) {
        const n = Number(amount)
        return "%1 %2".arg(Number.isInteger(n) ? n.toFixed(0) : n.toFixed(2)).arg(ConsoleBackend.tariff.currency)
    }
    function apply() {
        lastResult = ""
        ConsoleBackend.applyRuntime(modeBox.currentText, workersBox.value, threadsBox.value, policyBox.currentText)
    }

    spacing: 8
    Component.onCompleted: syncControls()

    Connections {
        target: ConsoleBackend
        function onRuntimeChanged() { panel.syncControls() }
        function onRuntimeApplied(error) {
            panel.lastResult = error === "" ? qsTr("Now serving in %1 mode.").arg(ConsoleBackend.mode)
                                            : qsTr("Not applied: %1").arg(error)
            panel.syncControls()
        }
    }

    GroupBox {
        Layout.fillWidth: true
        title: qsTr("Execution model")

        GridLayout {
            anchors.fill: parent
            columns: 2
            enabled: ConsoleBackend.canSwitchMode && !ConsoleBackend.applying

            Label { text: qsTr("Mode") }
            ComboBox {
                id: modeBox
                objectName: "modeBox"
                Layout.fillWidth: true
                model: ["single", "pool", "processes"]
            }
            Label { text: qsTr("Workers") }
            SpinBox {
                id: workersBox
                Layout.fillWidth: true
                from: 0
                to: 16
                enabled: modeBox.currentText === "processes"
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Worker processes; 0 = one per core")
            }
            Label { text: qsTr("Pool threads") }
            SpinBox {
                id: threadsBox
                Layout.fillWidth: true
                from: 0
                to: 256
                enabled: modeBox.currentText === "pool"
                ToolTip.visible: hovered
                ToolTip.text: qsTr("Handler threads; 0 = one per core")
            }
            Label { text: qsTr("Policy") }
            ComboBox {
                id: policyBox
                Layout.fillWidth: true
                model: ["round-robin", "least-loaded", "kernel"]
                enabled: modeBox.currentText === "processes"
            }
            BusyIndicator {
                Layout.preferredHeight: 28
                Layout.preferredWidth: 28
                running: ConsoleBackend.applying
            }
            Button {
                objectName: "applyButton"
                Layout.alignment: Qt.AlignRight
                text: qsTr("Apply (Ctrl+Return)")
                onClicked: panel.apply()
            }
        }
    }
    Label {
        Layout.fillWidth: true
        visible: text !== ""
        wrapMode: Text.Wrap
        textFormat: Text.PlainText // the server's answer, never markup
        text: panel.lastResult
    }
    RowLayout {
        Layout.fillWidth: true
        // Wrapped, not elided: the minimum fare and its currency were cut off in the side panel.
        Label {
            objectName: "tariffText"
            Layout.fillWidth: true
            wrapMode: Text.WordWrap
            opacity: 0.75
            text: qsTr("Fare: %1 + %2/km + %3/min, at least %4\nDemand: %5 rides/min")
                  .arg(panel.money(ConsoleBackend.tariff.base)).arg(panel.money(ConsoleBackend.tariff.per_km))
                  .arg(panel.money(ConsoleBackend.tariff.per_min)).arg(panel.money(ConsoleBackend.tariff.minimum))
                  .arg(ConsoleBackend.demandRate)
        }
        Button {
            objectName: "settingsButton"
            text: qsTr("Pricing… (Ctrl+,)")
            onClicked: panel.settingsRequested()
        }
    }

    ClusterNodeModel {
        id: clusterNodes
        backend: ConsoleBackend
    }

    ClusterNodes {
        Layout.fillWidth: true
        model: clusterNodes
    }

    WorkerListModel {
        id: workers
        backend: ConsoleBackend
    }

    RequestRateChart {
        Layout.fillWidth: true
        Layout.fillHeight: true
        Layout.minimumHeight: 200
        Layout.preferredHeight: 260
        p99Ms: workers.p99Ms
    }

    WorkerTable {
        Layout.fillWidth: true
        model: workers
    }

    // The chart and the log share what is left, so no empty band opens between them.
    EventLogView {
        Layout.fillWidth: true
        Layout.fillHeight: true
        Layout.minimumHeight: 90
        Layout.preferredHeight: 140
    }
}
