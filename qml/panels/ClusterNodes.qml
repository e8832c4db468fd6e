import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// The nodes of the cluster this console's server belongs to (itself included): one row each with
// its health as a coloured dot and a word, its name, mode, requests per second and a "leader" tag
// on the node running the simulator. One line when the server is not in a cluster.
ColumnLayout {
    id: section

    required property var model // ClusterNodeModel

    readonly property color upColour: "#10b981"
    readonly property color staleColour: "#e0a100"
    readonly property color failingColour: "#d64541"

    function modeText(mode, workers, threads) {
        if (mode === "processes" && workers > 0)
            return workers === 1 ? qsTr("processes, 1 worker") : qsTr("processes, %1 workers").arg(workers)
        if (mode === "pool" && threads > 0)
            return threads === 1 ? qsTr("pool, 1 thread") : qsTr("pool, %1 threads").arg(threads)
        return mode
    }

    spacing: 2

    Label {
        text: !section.model.inCluster ? qsTr("Cluster")
              : section.model.count === 1 ? qsTr("Cluster: 1 node") : qsTr("Cluster: %1 nodes").arg(section.model.count)
        font.bold: true
    }
    Label {
        objectName: "notInCluster"
        Layout.fillWidth: true
        visible: !section.model.inCluster
        wrapMode: Text.Wrap
        opacity: 0.75
        text: qsTr("Not in a cluster: this server serves alone.")
    }
    Label {
        Layout.fillWidth: true
        visible: section.model.inCluster && section.model.directoryError !== ""
        wrapMode: Text.Wrap
        color: section.staleColour
        textFormat: Text.PlainText
        text: qsTr("The node list could not be read: %1").arg(section.model.directoryError)
    }
    Repeater {
        objectName: "clusterNodeRows"
        model: section.model.inCluster ? section.model : null

        delegate: RowLayout {
            id: row

            required property string name
            required property string url
            required property string mode
            required property int workers
            required property int threads
            required property double requestsPerSecond
            required property string health
            required property bool leader
            required property bool ledgerOk

            Layout.fillWidth: true
            spacing: 6

            Rectangle {
                objectName: "healthDot"
                implicitWidth: 10
                implicitHeight: 10
                radius: 5
                color: row.health === "up" ? section.upColour : section.staleColour
            }
            Label {
                Layout.preferredWidth: 38
                font.pixelSize: 12
                text: row.health === "up" ? qsTr("up") : qsTr("stale")
            }
            Label {
                Layout.fillWidth: true
                font.pixelSize: 12
                font.bold: row.leader
                elide: Text.ElideRight
                textFormat: Text.PlainText // each node names itself in the shared directory
                text: row.name
                ToolTip.visible: nameArea.containsMouse
                ToolTip.text: row.url
                MouseArea {
                    id: nameArea
                    anchors.fill: parent
                    hoverEnabled: true
                }
            }
            Label {
                font.pixelSize: 12
                text: section.modeText(row.mode, row.workers, row.threads)
            }
            Label {
                Layout.preferredWidth: 70
                horizontalAlignment: Text.AlignRight
                font.pixelSize: 12
                text: qsTr("%1 req/s").arg(row.requestsPerSecond.toFixed(0))
            }
            Label {
                visible: !row.ledgerOk
                font.pixelSize: 12
                color: section.failingColour
                text: qsTr("ledger failing")
            }
            Label {
                objectName: "leaderTag"
                visible: row.leader
                font.pixelSize: 11
                font.bold: true
                leftPadding: 4
                rightPadding: 4
                text: qsTr("leader")
                background: Rectangle {
                    radius: 3
                    color: "transparent"
                    border.color: section.upColour
                }
            }
        }
    }
}
