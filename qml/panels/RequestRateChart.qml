import QtQuick
import QtQuick.Controls
import QtCharts
import TaxiCore.Console

// Requests per second and the server's p99 latency over the last minute, one point a second
// from the shared-memory counters.
ChartView {
    id: chart

    readonly property int windowSeconds: 60
    property int tick: 0
    property double p99Ms: 0

    // The smallest of 1, 2, 5 × 10^k that is at least x.
    function niceStep(x) {
        const p = Math.pow(10, Math.floor(Math.log10(Math.max(x, 1e-9))))
        for (const m of [1, 2, 5, 10]) {
            if (m * p >= x)
                return m * p
        }
        return 10 * p
    }

    title: qsTr("Requests per second and p99 (ms)")
    antialiasing: true
    legend.visible: true
    legend.alignment: Qt.AlignBottom
    legend.labelColor: palette.text
    backgroundColor: palette.base
    titleColor: palette.text
    margins { left: 4; right: 4; top: 4; bottom: 4 }

    ValueAxis {
        id: timeAxis
        min: chart.tick - chart.windowSeconds
        max: chart.tick
        labelFormat: "%d"
        labelsColor: chart.palette.text
        titleText: qsTr("seconds since start")
        titleBrush: chart.palette.text
        tickCount: 4
    }
    ValueAxis {
        id: rateAxis
        min: 0
        max: 10
        tickCount: 5
        labelFormat: "%.0f"
        labelsColor: chart.palette.text
    }
    ValueAxis {
        id: p99Axis
        min: 0
        max: 10
        tickCount: 5
        labelFormat: "%.3g" // sub-millisecond p99s are common
        labelsColor: chart.palette.text
    }
    LineSeries {
        id: series
        name: qsTr("req/s")
        axisX: timeAxis
        axisY: rateAxis
        width: 2
        color: "#2f6fd6"
    }
    LineSeries {
        id: p99Series
        name: qsTr("p99 ms")
        axisX: timeAxis
        axisYRight: p99Axis
        width: 1.5
        color: "#d68a1f"
    }

    Timer {
        interval: 1000
        repeat: true
        running: true
        onTriggered: {
            const rate = ConsoleBackend.requestsPerSecond
            chart.tick += 1
            series.append(chart.tick, rate)
            p99Series.append(chart.tick, chart.p99Ms)
            while (series.count > chart.windowSeconds + 1)
                series.remove(0)
            while (p99Series.count > chart.windowSeconds + 1)
                p99Series.remove(0)
            let slowest = 0.001
            for (let j = 0; j < p99Series.count; ++j)
                slowest = Math.max(slowest, p99Series.at(j).y)
            p99Axis.max = 4 * chart.niceStep(slowest * 1.1 / 4)
            let peak = 1
            for (let i = 0; i < series.count; ++i)
                peak = Math.max(peak, series.at(i).y)
            rateAxis.max = 4 * chart.niceStep(peak * 1.1 / 4) // four round ticks above zero
        }
    }
}
