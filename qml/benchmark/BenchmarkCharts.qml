import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import QtCharts

// The newest result of each mode side by side: req/s per mode, and its latency percentiles.
ColumnLayout {
    id: charts

    required property var results

    readonly property var modes: ["single", "pool", "processes"]
    readonly property var modeColors: ["#2f6fd6", "#2ea04a", "#d61f69"]
    readonly property var percentiles: [["p50", "p50Ms"], ["p90", "p90Ms"], ["p95", "p95Ms"], ["p99", "p99Ms"], ["max", "maxMs"]]

    // Newest first in `results`: the first row of a mode is its latest.
    function latest(mode) {
        for (let i = 0; i < results.length; ++i) {
            if (results[i].mode === mode)
                return results[i]
        }
        return null
    }
    function refresh() {
        const rps = []
        let top = 10, slowest = 1
        for (let m = 0; m < modes.length; ++m) {
            const row = latest(modes[m])
            rps.push(row ? row.rps : 0)
            top = Math.max(top, row ? row.rps : 0)
            const line = [latencyA, latencyB, latencyC][m]
            line.clear()
            if (!row)
                continue
            for (let p = 0; p < percentiles.length; ++p) {
                line.append(p, row[percentiles[p][1]])
                slowest = Math.max(slowest, row[percentiles[p][1]])
            }
        }
        rpsSet.values = rps
        rpsAxis.max = Math.ceil(top * 1.15)
        rpsAxis.applyNiceNumbers()
        latencyAxis.max = Math.ceil(slowest * 1.15)
        latencyAxis.applyNiceNumbers()
    }
    // Saves both charts as PNG files next to `path` (…-rps.png, …-latency.png).
    function savePng(path) {
        rpsChart.grabToImage(r => r.saveToFile(path.replace(/\.png$/, "") + "-rps.png"))
        latencyChart.grabToImage(r => r.saveToFile(path.replace(/\.png$/, "") + "-latency.png"))
    }

    onResultsChanged: refresh()
    Component.onCompleted: refresh()
    spacing: 2

    ChartView {
        id: rpsChart
        Layout.fillWidth: true
        Layout.fillHeight: true
        title: qsTr("req/s by mode (latest run of each)")
        legend.visible: false
        antialiasing: true
        backgroundColor: palette.base
        titleColor: palette.text
        margins { left: 2; right: 2; top: 2; bottom: 2 }
        BarSeries {
            axisX: BarCategoryAxis { categories: charts.modes; labelsColor: rpsChart.palette.text }
            axisY: ValueAxis { id: rpsAxis; min: 0; max: 10; labelFormat: "%.0f"; labelsColor: rpsChart.palette.text }
            BarSet { id: rpsSet; label: qsTr("req/s"); color: "#2f6fd6" }
        }
    }
    ChartView {
        id: latencyChart
        Layout.fillWidth: true
        Layout.fillHeight: true
        title: qsTr("latency percentiles (ms)")
        antialiasing: true
        legend.alignment: Qt.AlignBottom
        legend.labelColor: palette.text
        backgroundColor: palette.base
        titleColor: palette.text
        margins { left: 2; right: 2; top: 2; bottom: 2 }
        CategoryAxis {
            id: percentileAxis
            min: 0
            max: 4
            labelsPosition: CategoryAxis.AxisLabelsPositionOnValue
            labelsColor: latencyChart.palette.text
            CategoryRange { label: "p50"; endValue: 0 }
            CategoryRange { label: "p90"; endValue: 1 }
            CategoryRange { label: "p95"; endValue: 2 }
            CategoryRange { label: "p99"; endValue: 3 }
            CategoryRange { label: "max"; endValue: 4 }
        }
        ValueAxis { id: latencyAxis; min: 0; max: 10; labelFormat: "%.3g"; labelsColor: latencyChart.palette.text }
        LineSeries { id: latencyA; name: charts.modes[0]; color: charts.modeColors[0]; axisX: percentileAxis; axisY: latencyAxis; width: 2 }
        LineSeries { id: latencyB; name: charts.modes[1]; color: charts.modeColors[1]; axisX: percentileAxis; axisY: latencyAxis; width: 2 }
        LineSeries { id: latencyC; name: charts.modes[2]; color: charts.modeColors[2]; axisX: percentileAxis; axisY: latencyAxis; width: 2 }
    }
}
