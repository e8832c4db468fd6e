import QtQuick
import QtTest
import TaxiCore

// The menu bar: File, View, Server and Help, whose shortcuts work while the menus are closed, and
// entries offered only when they can be done (no export without trips, no second benchmark).
TestCase {
    id: testCase
    name: "ConsoleMenuBar"
    when: windowShown
    visible: true
    width: 640
    height: 200

    Component {
        id: barComponent
        ConsoleMenuBar { width: 640 }
    }
    SignalSpy { id: panelSpy; signalName: "panelRequested" }
    SignalSpy { id: exportSpy; signalName: "exportRequested" }
    SignalSpy { id: benchmarkSpy; signalName: "benchmarkRequested" }
    SignalSpy { id: zoomSpy; signalName: "zoomRequested" }

    function make(props) {
        const bar = createTemporaryObject(barComponent, testCase, props || {})
        verify(bar)
        for (const spy of [panelSpy, exportSpy, benchmarkSpy, zoomSpy]) {
            spy.target = bar
            spy.clear()
        }
        return bar
    }
    function action(bar, name) {
        for (let m = 0; m < bar.count; ++m) {
            const menu = bar.menuAt(m)
            for (let i = 0; i < menu.count; ++i) {
                const item = menu.itemAt(i)
                if (item && item.action && item.action.objectName === name)
                    return item.action
            }
        }
        return null
    }

    function test_fourMenusInOrder() {
        const bar = make()
        compare(bar.count, 4)
        const titles = []
        for (let m = 0; m < bar.count; ++m)
            titles.push(bar.menuAt(m).title.replace("&", ""))
        compare(titles, ["File", "View", "Server", "Help"])
    }

    function test_panelShortcutsWithMenusClosed() {
        const bar = make()
        keyClick(Qt.Key_2, Qt.ControlModifier)
        keyClick(Qt.Key_4, Qt.ControlModifier)
        compare(panelSpy.count, 2)
        compare(panelSpy.signalArguments[0][0], "server")
        compare(panelSpy.signalArguments[1][0], "reports")
        keyClick(Qt.Key_0, Qt.ControlModifier)
        compare(zoomSpy.count, 1)
        compare(zoomSpy.signalArguments[0][0], 0)
    }

    function test_exportOnlyWithTrips() {
        const bar = make({ canExport: false })
        verify(!action(bar, "exportAction").enabled)
        keyClick(Qt.Key_E, Qt.ControlModifier)
        compare(exportSpy.count, 0)
        bar.canExport = true
        verify(action(bar, "exportAction").enabled)
        keyClick(Qt.Key_E, Qt.ControlModifier)
        compare(exportSpy.count, 1)
    }

    function test_noSecondBenchmarkWhileOneRuns() {
        const bar = make({ benchmarkRunning: true })
        keyClick(Qt.Key_B, Qt.ControlModifier)
        compare(benchmarkSpy.count, 0)
        bar.benchmarkRunning = false
        keyClick(Qt.Key_B, Qt.ControlModifier)
        compare(benchmarkSpy.count, 1)
    }
}
