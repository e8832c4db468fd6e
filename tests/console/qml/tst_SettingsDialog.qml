import QtQuick
import QtTest
import TaxiCore
import TaxiCore.Console

// The pricing dialog: filled from the server's tariff, applies valid values (ConsoleBackend
// then holds them), refuses bad ones with a message naming the field.
TestCase {
    id: testCase
    name: "SettingsDialog"
    when: windowShown
    visible: true
    width: 640
    height: 560

    Component {
        id: dialogComponent
        SettingsDialog {}
    }

    function field(dialog, name) { return findChild(dialog.contentItem, name) }

    function test_loadsAppliesAndRefuses() {
        const dialog = createTemporaryObject(dialogComponent, testCase)
        verify(dialog)
        dialog.open()
        tryCompare(dialog, "opened", true)
        compare(field(dialog, "currencyField").text, ConsoleBackend.tariff.currency)
        compare(Number(field(dialog, "baseField").text), ConsoleBackend.tariff.base)

        field(dialog, "baseField").text = "50"
        field(dialog, "perKmField").text = "12.5"
        field(dialog, "demandField").text = "7"
        mouseClick(findChild(dialog.contentItem, "applyPricingButton"))
        compare(dialog.message, "Applied and saved.")
        compare(ConsoleBackend.tariff.base, 50)
        compare(ConsoleBackend.tariff.per_km, 12.5)
        compare(ConsoleBackend.demandRate, 7)

        field(dialog, "demandField").text = "-1"
        compare(dialog.apply() !== "", true)
        verify(dialog.message.indexOf("demand") >= 0, dialog.message)
        compare(ConsoleBackend.demandRate, 7)
        dialog.close()
    }
}
