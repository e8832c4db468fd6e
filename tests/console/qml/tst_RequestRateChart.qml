import QtQuick
import QtTest
import TaxiCore

// The Server panel's chart reads right: distinct round ticks on both value axes whatever the load
// (a step of 0.5 printed "0, 1, 1, 2, 2"), a unit on every axis, clock times on the time axis, and
// no p99 scale before a request was measured (it showed 0–0.002 ms over nothing).
TestCase {
    id: testCase
    name: "RequestRateChart"
    when: windowShown
    visible: true
    width: 420
    height: 300

    Component {
        id: chartComponent
        RequestRateChart { width: 420; height: 300; live: false }
    }

    function make() {
        const chart = createTemporaryObject(chartComponent, testCase)
        verify(chart)
        return chart
    }
    function verifyDistinct(labels, what) {
        for (let i = 1; i < labels.length; ++i)
            verify(Number(labels[i]) > Number(labels[i - 1]), what + ": " + labels.join(", "))
    }

    function test_rateTicksAreDistinct_data() {
        return [{ tag: "idle", peak: 0 }, { tag: "one", peak: 1 }, { tag: "two", peak: 2 },
                { tag: "seven", peak: 7 }, { tag: "hundreds", peak: 345 }, { tag: "thousands", peak: 12345 }]
    }
    function test_rateTicksAreDistinct(data) {
        const chart = make()
        const t0 = Date.UTC(2026, 11, 2, 10, 0, 0)
        for (let s = 0; s < 10; ++s)
            chart.addSample(t0 + s * 1000, s === 5 ? data.peak : data.peak / 2, 0)
        const labels = chart.tickLabels(chart.rateAxis)
        verifyDistinct(labels, "req/s")
        verify(chart.rateAxis.max >= data.peak, "the peak fits")
        compare(labels[0], "0")
    }

    function test_p99TicksAreDistinct_data() {
        return [{ tag: "sub-ms", p99: 0.37 }, { tag: "tens", p99: 23 }, { tag: "tiny", p99: 0.004 },
                { tag: "slow", p99: 1800 }]
    }
    function test_p99TicksAreDistinct(data) {
        const chart = make()
        chart.addSample(Date.now(), 10, data.p99)
        verify(chart.hasLatency)
        const labels = chart.tickLabels(chart.p99Axis)
        verifyDistinct(labels, "p99")
        verify(chart.p99Axis.max >= data.p99)
    }

    function test_noLatencyScaleWithoutData() {
        const chart = make()
        chart.addSample(Date.now(), 0, 0)
        verify(!chart.hasLatency)
        verify(!chart.p99Axis.visible)
    }

    function test_everyAxisHasItsUnit() {
        const chart = make()
        compare(chart.rateAxis.titleText, "req/s")
        compare(chart.p99Axis.titleText, "p99 ms")
        // Clock time, as in the event log under the chart; the last minute.
        compare(chart.timeAxis.format, "HH:mm:ss")
        const now = Date.UTC(2026, 11, 2, 10, 0, 0)
        chart.addSample(now, 3, 1)
        compare(chart.timeAxis.max.getTime(), now)
        compare(chart.timeAxis.min.getTime(), now - 60 * 1000)
    }
}
