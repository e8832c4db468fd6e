import QtQuick
import QtQuick.Controls
import QtCharts
import TaxiCore.Console
import "AxisTicks.js" as AxisTicks

// Requests per second and the server's p99 latency over the last minute, one point a second
// from the shared-memory counters, against the clock (the event log's times). The p99 axis shows
// only once a request was measured: an empty 0–0.002 ms scale said nothing.
ChartView {
    id: chart

    readonly property int windowSeconds: 60
    property double p99Ms: 0
    // Off in the tests, which add their own samples.
    property bool live: true
    readonly property bool hasLatency: p99Axis.visible
    readonly property alias timeAxis: timeAxis
    readonly property alias rateAxis: rateAxis
    readonly property alias p99Axis: p99Axis

    // One sample at `timeMs` (ms since the epoch); keeps the last `windowSeconds` and rescales.
    function addSample(timeMs, rate, p99) {
        series.append(timeMs, rate)
        p99Series.append(timeMs, p99)
        while (series.count > chart.windowSeconds + 1)
            series.remove(0)
        while (p99Series.count > chart.windowSeconds + 1)
            p99Series.remove(0)
        timeAxis.min = new Date(timeMs - chart.windowSeconds * 1000)
        timeAxis.max = new Date(timeMs)

        let peak = 0, slowest = 0
        for (let i = 0; i < series.count; ++i) {
            peak = Math.max(peak, series.at(i).y)
            slowest = Math.max(slowest, p99Series.at(i).y)
        }
        chart.fit(rateAxis, AxisTicks.scale(peak, 4, 1)) // whole requests: never a step below 1
        p99Axis.visible = slowest > 0
        p99Series.visible = slowest > 0
        if (slowest > 0)
            chart.fit(p99Axis, AxisTicks.scale(slowest, 4, 0.01))
    }
    function fit(axis, s) {
        axis.max = s.max
        axis.tickCount = s.tickCount
        axis.labelFormat = s.labelFormat
    }
    // What `axis` prints at its ticks (the tests check they are distinct).
    function tickLabels(axis) {
        const decimals = Number(axis.labelFormat.replace(/^%\.(\d+)f$/, "$1"))
        return AxisTicks.labels(axis.min, axis.max, axis.tickCount, decimals)
    }

    title: qsTr("Requests per second and p99 latency")
    antialiasing: true
    legend.visible: true
    legend.alignment: Qt.AlignBottom
    legend.labelColor: palette.text
    backgroundColor: palette.base
    titleColor: palette.text
    margins { left: 4; right: 4; top: 4; bottom: 4 }

    DateTimeAxis {
        id: timeAxis
        format: "HH:mm:ss"
        tickCount: 4 // every 20 s: room for the clock times in the side panel
        labelsColor: chart.palette.text
        min: new Date(Date.now() - chart.windowSeconds * 1000)
        max: new Date()
    }
    ValueAxis {
        id: rateAxis
        min: 0
        max: 4
        tickCount: 5
        labelFormat: "%.0f"
        labelsColor: chart.palette.text
        titleText: qsTr("req/s")
        titleBrush: chart.palette.text
    }
    ValueAxis {
        id: p99Axis
        min: 0
        max: 1
        tickCount: 5
        labelFormat: "%.2f"
        labelsColor: chart.palette.text
        titleText: qsTr("p99 ms")
        titleBrush: chart.palette.text
        visible: false
    }
    LineSeries {
        id: series
        name: qsTr("requests per second")
        axisX: timeAxis
        axisY: rateAxis
        width: 2
        color: "#2f6fd6"
    }
    LineSeries {
        id: p99Series
        name: qsTr("p99 latency (ms)")
        axisX: timeAxis
        axisYRight: p99Axis
        width: 1.5
        color: "#d68a1f"
        visible: false
    }

    Timer {
        interval: 1000
        repeat: true
        running: chart.live
        onTriggered: chart.addSample(Date.now(), ConsoleBackend.requestsPerSecond, chart.p99Ms)
    }
}
