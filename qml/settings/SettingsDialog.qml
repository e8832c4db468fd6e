import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import TaxiCore.Console

// Pricing of the embedded server: the tariff and the demand generator's rate. Applied to the
// server at once and kept for the next start (ConsoleBackend.applyPricing stores them).
Dialog {
    id: dialog
    objectName: "settingsDialog"

    property string message: ""

    // Fills the fields from what the server uses now.
    function load() {
        const t = ConsoleBackend.tariff
        currencyField.text = t.currency
        baseField.text = t.base
        perKmField.text = t.per_km
        perMinField.text = t.per_min
        minimumField.text = t.minimum
        demandField.text = ConsoleBackend.demandRate
        message = ""
    }
    // Empty when applied, else why not (nothing is applied then).
    function apply() {
        const error = ConsoleBackend.applyPricing({
            currency: currencyField.text.trim(),
            base: Number(baseField.text),
            per_km: Number(perKmField.text),
            per_min: Number(perMinField.text),
            minimum: Number(minimumField.text)
        }, Number(demandField.text))
        message = error === "" ? qsTr("Applied and saved.") : qsTr("Not applied: %1").arg(error)
        return error
    }

    title: qsTr("Pricing and demand")
    modal: true
    anchors.centerIn: parent
    standardButtons: Dialog.Close
    onAboutToShow: load()

    component NumberField: TextField {
        Layout.fillWidth: true
        selectByMouse: true
        inputMethodHints: Qt.ImhFormattedNumbersOnly
        validator: DoubleValidator { bottom: 0; notation: DoubleValidator.StandardNotation; locale: "C" }
    }

    ColumnLayout {
        anchors.fill: parent
        GroupBox {
            Layout.fillWidth: true
            title: qsTr("Tariff: max(minimum, base + per km · km + per min · min) × surge")
            GridLayout {
                anchors.fill: parent
                columns: 2
                Label { text: qsTr("Currency") }
                TextField { id: currencyField; objectName: "currencyField"; Layout.fillWidth: true; maximumLength: 8 }
                Label { text: qsTr("Base") }
                NumberField { id: baseField; objectName: "baseField" }
                Label { text: qsTr("Per km") }
                NumberField { id: perKmField; objectName: "perKmField" }
                Label { text: qsTr("Per minute") }
                NumberField { id: perMinField; objectName: "perMinField" }
                Label { text: qsTr("Minimum fare") }
                NumberField { id: minimumField; objectName: "minimumField" }
            }
        }
        GroupBox {
            Layout.fillWidth: true
            title: qsTr("Demand")
            GridLayout {
                anchors.fill: parent
                columns: 2
                Label { text: qsTr("Generated rides per minute (0 = off)") }
                NumberField { id: demandField; objectName: "demandField" }
            }
        }
        RowLayout {
            Layout.fillWidth: true
            Label {
                Layout.fillWidth: true
                wrapMode: Text.Wrap
                text: dialog.message
            }
            Button {
                objectName: "applyPricingButton"
                text: qsTr("Apply")
                highlighted: true
                onClicked: dialog.apply()
            }
        }
    }
}
