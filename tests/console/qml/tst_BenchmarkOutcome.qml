import QtQuick
import QtTest
import TaxiCore

// A benchmark run's end is stated, not a quiet "Done.": finished with its figures and units,
// stopped, or failed with the reason. And the results table's headers carry their units.
TestCase {
    id: testCase
    name: "BenchmarkOutcome"
    when: windowShown
    visible: true
    width: 460
    height: 300

    Component {
        id: outcomeComponent
        BenchmarkOutcome { width: 440 }
    }
    Component {
        id: resultsComponent
        BenchmarkResults { width: 440; height: 200; results: [] }
    }

    readonly property var row: ({ mode: "pool", concurrency: 64, completed: 12345, rps: 2469.2, p50Ms: 0.41,
                                  p99Ms: 2.3, maxMs: 19.6, timeouts: 0, errors: 0 })

    function test_finishedShowsItsSummary() {
        const o = createTemporaryObject(outcomeComponent, testCase,
                                        { outcomeState: "finished", mode: "pool", result: testCase.row })
        verify(o.visible)
        compare(findChild(o, "outcomeHeadline").text, "Finished against pool mode")
        const summary = findChild(o, "outcomeSummary").text
        for (const part of ["req/s", "p50 0.41 ms", "p99 2.30 ms", "max 20 ms", "0 timeouts"])
            verify(summary.indexOf(part) >= 0, part + " in " + summary)
        compare(o.tint, Qt.color("#2ea04a"))
    }

    function test_failedSaysWhy() {
        const o = createTemporaryObject(outcomeComponent, testCase,
                                        { outcomeState: "failed", detail: "taxicore-bench crashed" })
        compare(findChild(o, "outcomeHeadline").text, "Failed")
        compare(findChild(o, "outcomeSummary").text, "taxicore-bench crashed")
        compare(o.tint, Qt.color("#c0392b"))
    }

    function test_nothingBeforeTheFirstRun() {
        const o = createTemporaryObject(outcomeComponent, testCase, { outcomeState: "" })
        verify(!o.visible)
    }

    function test_resultHeadersHaveUnitsAndTips() {
        const table = createTemporaryObject(resultsComponent, testCase)
        const titles = table.columns.map(c => c.title)
        compare(titles, ["mode", "connections", "requests", "req/s", "p50 ms", "p99 ms", "max ms", "timeouts"])
        for (const c of table.columns)
            verify(c.tip.length > 10, c.title)
    }
}
