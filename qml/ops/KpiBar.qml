import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore.Console

// The dispatcher's numbers at a glance, under the server bar: open bookings, riders waiting for
// a car, time to pickup (median and 90th percentile), fleet utilisation and bookings per minute.
// Each figure explains itself in a tooltip.
ToolBar {
    id: bar

    required property OperationsKpis kpis
    readonly property bool dark: palette.window.hslLightness < 0.5

    // "3 min 05 s", "42 s"; "—" before any car reached a pickup.
    function duration(seconds, samples) {
        if (samples === 0)
            return "—"
        const s = Math.round(seconds)
        if (s < 60)
            return qsTr("%1 s").arg(s)
        return qsTr("%1 min %2 s").arg(Math.floor(s / 60)).arg(String(s % 60).padStart(2, "0"))
    }

    component Kpi: ColumnLayout {
        id: kpi
        property string title
        property string value
        property string help
        property color valueColor: palette.windowText
        spacing: 0
        Label {
            text: kpi.title
            font.pixelSize: 11
            opacity: 0.7
        }
        Label {
            objectName: "kpiValue"
            text: kpi.value
            color: kpi.valueColor
            font.pixelSize: 17
            font.bold: true
        }
        HoverHandler { id: hover }
        ToolTip.visible: hover.hovered
        ToolTip.delay: 400
        ToolTip.text: kpi.help
    }

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 8
        anchors.rightMargin: 8
        spacing: 28

        Kpi {
            objectName: "kpiOpen"
            title: qsTr("Open bookings")
            value: bar.kpis.openBookings.toLocaleString(Qt.locale(), "f", 0)
            help: qsTr("Bookings requested, assigned, with the car at the pickup, or on the trip")
        }
        Kpi {
            objectName: "kpiWaiting"
            title: qsTr("Waiting for a car")
            value: bar.kpis.unassigned > 0 ? qsTr("%1 (%2 without car)").arg(bar.kpis.waitingForPickup)
                                                                      .arg(bar.kpis.unassigned)
                                           : bar.kpis.waitingForPickup.toLocaleString(Qt.locale(), "f", 0)
            valueColor: bar.kpis.unassigned > 0 ? (bar.dark ? "#ff8a80" : "#c62828") : palette.windowText
            help: qsTr("Riders not yet on board: their car is on its way or waiting at the pickup")
        }
        Kpi {
            objectName: "kpiPickup"
            title: qsTr("Time to pickup: median · 90 %")
            value: bar.kpis.pickupSamples === 0
                   ? "—"
                   : "%1 · %2".arg(bar.duration(bar.kpis.medianPickupS, bar.kpis.pickupSamples))
                              .arg(bar.duration(bar.kpis.p90PickupS, bar.kpis.pickupSamples))
            help: qsTr("From booking to the car at the pickup, over the %n car(s) that arrived in the last 15 minutes "
                       + "(9 in 10 riders waited at most the second figure)", "", bar.kpis.pickupSamples)
        }
        Kpi {
            objectName: "kpiUtilisation"
            title: qsTr("Fleet utilisation")
            value: qsTr("%1 %").arg(Math.round(bar.kpis.utilisation * 100))
            help: qsTr("Share of the %n car(s) on duty that are busy (to a pickup, waiting there, or on a trip)", "",
                       bar.kpis.carsOnDuty)
        }
        Kpi {
            objectName: "kpiRate"
            title: qsTr("Bookings per minute")
            value: bar.kpis.bookingsPerMinute.toLocaleString(Qt.locale(), "f", 0)
            help: qsTr("Bookings made in the last 60 seconds")
        }
        Item { Layout.fillWidth: true }
    }
}
