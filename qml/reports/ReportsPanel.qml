import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import QtCharts
import TaxiCore.Console

// Completed trips from the embedded server's ledger: a date range, its totals, trips by hour of
// day, the trips themselves and the benchmark runs of that range; CSV export of trips and hours.
ColumnLayout {
    id: panel

    property string status: ""
    readonly property alias report: report

    // The trips' currency, or the tariff's before there are any: never a bare "0.00".
    readonly property string currency: report.currency !== "" ? report.currency : ConsoleBackend.tariff.currency
    readonly property bool canExport: !report.loading && report.tripCount > 0

    function money(amount) {
        return amount.toFixed(2) + (currency !== "" ? " " + currency : "")
    }
    // File → Export report… and Ctrl+E: nothing to write without trips.
    function exportCsv() {
        if (canExport)
            exportDialog.open()
    }
    // The by-hour chart follows the model (24 rows, changed in place by each reading).
    function refreshChart() {
        const trips = []
        for (let h = 0; h < 24; ++h)
            trips.push(report.hourly.data(report.hourly.index(h, 0), HourlyTripsModel.TripsRole))
        hourSet.values = trips
        hourAxis.max = Math.max(4, Math.ceil(report.hourly.busiestTrips * 1.15))
        hourAxis.applyNiceNumbers()
    }

    spacing: 6

    TripReport {
        id: report
        objectName: "tripReport"
        backend: ConsoleBackend
        onLoaded: panel.refreshChart()
    }
    // The ledger grows while the server serves: keep the view current while it is shown.
    Timer {
        interval: 5000
        repeat: true
        running: panel.visible && ConsoleBackend.serving
        onTriggered: report.refresh()
    }

    RowLayout {
        Layout.fillWidth: true
        ButtonGroup { id: rangeGroup }
        RadioButton {
            text: qsTr("Today")
            checked: report.range === "today"
            ButtonGroup.group: rangeGroup
            onClicked: report.range = "today"
        }
        RadioButton {
            text: qsTr("7 days")
            checked: report.range === "week"
            ButtonGroup.group: rangeGroup
            onClicked: report.range = "week"
        }
        RadioButton {
            objectName: "customRange"
            text: qsTr("Custom")
            checked: report.range === "custom"
            ButtonGroup.group: rangeGroup
            onClicked: report.range = "custom"
        }
        Item { Layout.fillWidth: true }
        BusyIndicator { running: report.loading; implicitWidth: 24; implicitHeight: 24 }
    }
    RowLayout {
        Layout.fillWidth: true
        visible: report.range === "custom"
        Label { text: qsTr("From") }
        TextField {
            Layout.fillWidth: true
            text: report.customFrom
            inputMask: "9999-99-99"
            selectByMouse: true
            onEditingFinished: report.customFrom = text
        }
        Label { text: qsTr("to") }
        TextField {
            Layout.fillWidth: true
            text: report.customTo
            inputMask: "9999-99-99"
            selectByMouse: true
            onEditingFinished: report.customTo = text
        }
    }

    RowLayout {
        Layout.fillWidth: true
        Repeater {
            model: [
                { name: "trips", title: qsTr("Trips"), value: report.tripCount.toString() },
                { name: "revenue", title: qsTr("Revenue"), value: panel.money(report.revenue) },
                { name: "averageFare", title: qsTr("Average fare"), value: panel.money(report.averageFare) }
            ]
            ColumnLayout {
                required property var modelData
                Layout.fillWidth: true
                Layout.preferredWidth: panel.width / 3 // three equal columns
                spacing: 0
                Label { text: modelData.title; font.pixelSize: 11; opacity: 0.7 }
                Label { objectName: modelData.name + "Value"; text: modelData.value; font.pixelSize: 18; font.bold: true }
            }
        }
    }
    Label {
        Layout.fillWidth: true
        visible: text !== ""
        wrapMode: Text.Wrap
        color: report.error !== "" ? "#c0392b" : palette.text
        text: report.error !== "" ? report.error : panel.status
    }

    ChartView {
        id: hourChart
        Layout.fillWidth: true
        Layout.preferredHeight: 170
        title: qsTr("Trips by hour of day")
        legend.visible: false
        antialiasing: true
        backgroundColor: palette.base
        titleColor: palette.text
        margins { left: 2; right: 2; top: 2; bottom: 2 }
        BarSeries {
            barWidth: 0.9
            // Bar i stands at x = i: a value axis labels every 6th hour where 24 category
            // labels would not fit the side panel.
            axisX: ValueAxis {
                min: -0.5
                max: 23.5
                tickType: ValueAxis.TicksDynamic
                tickAnchor: 0
                tickInterval: 6
                labelFormat: "%d h"
                labelsColor: hourChart.palette.text
            }
            axisY: ValueAxis { id: hourAxis; min: 0; max: 4; labelFormat: "%.0f"; labelsColor: hourChart.palette.text }
            BarSet { id: hourSet; label: qsTr("trips"); color: "#2f6fd6" }
        }
    }

    RowLayout {
        Layout.fillWidth: true
        TabBar {
            id: listTabs
            Layout.fillWidth: true
            TabButton { text: qsTr("Trips (%1)").arg(report.trips.count) }
            TabButton { text: qsTr("Benchmark runs (%1)").arg(report.benchmarkRuns.length) }
        }
        Button {
            objectName: "exportReport"
            text: qsTr("Export CSV…")
            enabled: panel.canExport
            onClicked: panel.exportCsv()
            // Hover works on a disabled button too: say why it is greyed out.
            ToolTip.visible: exportHover.hovered
            ToolTip.text: panel.canExport ? qsTr("Write the trips and the trips by hour as CSV (Ctrl+E)")
                                          : qsTr("No completed trips in this range to export")
            HoverHandler { id: exportHover }
        }
    }
    StackLayout {
        Layout.fillWidth: true
        Layout.fillHeight: true
        currentIndex: listTabs.currentIndex

        ColumnLayout {
            spacing: 2
            Row {
                spacing: 4
                Repeater {
                    model: [[qsTr("ended"), 112], [qsTr("booking"), 60], [qsTr("car"), 36], [qsTr("km"), 44],
                            [qsTr("min"), 40], [qsTr("fare %1").arg(panel.currency), 64], [qsTr("rider"), 60]]
                    Label { required property var modelData; width: modelData[1]; text: modelData[0]; font.bold: true; font.pixelSize: 12 }
                }
            }
            ListView {
                objectName: "tripList"
                Layout.fillWidth: true
                Layout.fillHeight: true
                clip: true
                model: report.trips
                reuseItems: true
                ScrollBar.vertical: ScrollBar {}
                delegate: Row {
                    spacing: 4
                    required property string endedText
                    required property var bookingId
                    required property int carId
                    required property double distanceKm
                    required property double durationMin
                    required property double fare
                    required property string rider
                    Repeater {
                        model: [[endedText, 112], [bookingId, 60], [carId, 36], [distanceKm.toFixed(1), 44],
                                [durationMin.toFixed(0), 40], [fare.toFixed(2), 64], [rider, 60]]
                        Label {
                            required property var modelData
                            width: modelData[1]
                            textFormat: Text.PlainText // the rider column is what the rider sent
                            text: modelData[0]
                            elide: Text.ElideRight
                            font.pixelSize: 12
                        }
                    }
                }
                Label {
                    anchors.centerIn: parent
                    visible: report.trips.count === 0 && !report.loading
                    text: qsTr("No completed trips in this range")
                    opacity: 0.6
                }
            }
        }
        ListView {
            objectName: "benchmarkRunList"
            clip: true
            model: report.benchmarkRuns
            ScrollBar.vertical: ScrollBar {}
            delegate: Label {
                required property var modelData
                width: ListView.view.width
                wrapMode: Text.Wrap
                textFormat: Text.PlainText // the run's target is a URL typed in, kept in the ledger
                font.pixelSize: 12
                text: qsTr("%1  %2 %3, %4 connections, %5 s: %6 req/s, p50 %7 ms, p99 %8 ms, %9 errors")
                      .arg(new Date(modelData.atMs).toLocaleString(Qt.locale(), "yyyy-MM-dd HH:mm"))
                      .arg(modelData.mode ?? "")
                      .arg(modelData.scenario ?? modelData.url)
                      .arg(modelData.concurrency)
                      .arg(Number(modelData.duration_s).toFixed(0))
                      .arg(Number(modelData.requests_per_s).toFixed(0))
                      .arg(Number(modelData.p50_ms).toFixed(2))
                      .arg(Number(modelData.p99_ms).toFixed(2))
                      .arg(modelData.errors)
            }
        }
    }

    FileDialog {
        id: exportDialog
        fileMode: FileDialog.SaveFile
        defaultSuffix: "csv"
        nameFilters: [qsTr("CSV (*.csv)")]
        onAccepted: {
            const ok = report.exportCsv(selectedFile)
            panel.status = ok ? qsTr("Trips exported to %1 (and the hours to …-by-hour.csv)").arg(selectedFile.toString())
                              : ""
        }
    }
}
