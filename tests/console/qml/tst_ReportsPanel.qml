import QtQuick
import QtTest
import TaxiCore
import TaxiCore.Console

// The Reports panel with no trips (the backend here serves nothing): money still has its currency
// (it read "0.00"), and Export is not offered with nothing to export.
TestCase {
    id: testCase
    name: "ReportsPanel"
    when: windowShown
    visible: true
    width: 460
    height: 700

    Component {
        id: panelComponent
        ReportsPanel { width: 460; height: 700 }
    }

    function test_noTripsMeansNoExportAndMoneyHasItsCurrency() {
        const panel = createTemporaryObject(panelComponent, testCase)
        verify(panel)
        tryCompare(panel.report, "loading", false)
        compare(panel.report.tripCount, 0)
        verify(ConsoleBackend.tariff.currency !== "")
        compare(panel.currency, ConsoleBackend.tariff.currency)
        compare(findChild(panel, "revenueValue").text, "0.00 " + ConsoleBackend.tariff.currency)
        compare(findChild(panel, "averageFareValue").text, "0.00 " + ConsoleBackend.tariff.currency)
        const exportButton = findChild(panel, "exportReport")
        verify(exportButton)
        verify(!exportButton.enabled)
        verify(!panel.canExport)
    }
}
