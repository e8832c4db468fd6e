import QtQuick
import QtQuick.Controls
import TaxiCore.Console

// A paper map's scale bar: a round length (1, 2 or 5 × 10ⁿ m) that fits in maxWidth,
// following the zoom.
Item {
    id: bar

    required property CityMapItem map
    property real maxWidth: 120
    property color ink: palette.windowText
    readonly property var choice: map.scaleBarFor(map.metresPerPixel, maxWidth)
    readonly property string label: choice.label ?? ""

    implicitWidth: Math.max(ruler.width, caption.implicitWidth)
    implicitHeight: caption.implicitHeight + 8

    Label {
        id: caption
        objectName: "scaleBarLabel"
        anchors.left: parent.left
        anchors.bottom: ruler.top
        anchors.bottomMargin: 1
        text: bar.label
        font.pixelSize: 11
        color: bar.ink
    }
    // An open bracket (|___|), like the scale of a printed map.
    Item {
        id: ruler
        objectName: "scaleBarRuler"
        anchors.left: parent.left
        anchors.bottom: parent.bottom
        width: Math.round(bar.choice.px ?? 0)
        height: 6
        Rectangle { anchors.bottom: parent.bottom; width: parent.width; height: 2; color: bar.ink }
        Rectangle { anchors.left: parent.left; width: 2; height: parent.height; color: bar.ink }
        Rectangle { anchors.right: parent.right; width: 2; height: parent.height; color: bar.ink }
    }
}
