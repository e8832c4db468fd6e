import QtQuick
import QtTest
import TaxiCore
import TaxiCore.Console

// The map's interaction without a server: zoom keeps the cursor's point, drag pans, a click
// on empty map selects no car. (Its geometry is checked in the Xvfb screenshot test.)
TestCase {
    id: testCase
    name: "CityMap"
    when: windowShown
    visible: true // TestCase is invisible by default: no input, no effective visibility
    width: 800
    height: 600

    Component {
        id: mapComponent
        CityMap {
            width: 800
            height: 600
        }
    }

    SignalSpy {
        id: clickSpy
        signalName: "clicked"
    }

    SignalSpy {
        id: carClickSpy
        signalName: "carClicked"
    }

    Component {
        id: overlayComponent
        Rectangle { objectName: "testOverlay"; anchors.fill: parent; color: "transparent" }
    }

    function mapItem(map) { return findChild(map, "cityMap") }

    function test_buttonsZoomAndFit() {
        const map = createTemporaryObject(mapComponent, testCase)
        const item = mapItem(map)
        verify(item)
        const fitted = item.metresPerPixel
        verify(fitted > 0)
        map.zoomIn()
        fuzzyCompare(item.metresPerPixel, fitted / 1.5, 1e-9)
        map.zoomOut()
        map.zoomOut()
        fuzzyCompare(item.metresPerPixel, fitted * 1.5, 1e-9)
        map.fit()
        fuzzyCompare(item.metresPerPixel, fitted, 1e-9)
    }

    function test_wheelZoomsIn() {
        const map = createTemporaryObject(mapComponent, testCase)
        const item = mapItem(map)
        const before = item.metresPerPixel
        mouseWheel(item, 200, 150, 0, 120)
        verify(item.metresPerPixel < before, item.metresPerPixel + " " + before)
    }

    function test_dragPansWithoutZooming() {
        const map = createTemporaryObject(mapComponent, testCase)
        const item = mapItem(map)
        const before = item.metresPerPixel
        mouseDrag(item, 400, 300, 120, 80)
        compare(item.metresPerPixel, before)
    }

    function test_clickOnEmptyMapSelectsNothing() {
        const map = createTemporaryObject(mapComponent, testCase)
        const item = mapItem(map)
        clickSpy.target = item
        clickSpy.clear()
        mouseClick(item, 300, 300)
        compare(clickSpy.count, 1)
        compare(clickSpy.signalArguments[0][0], 0)
        compare(item.carAt(300, 300), 0)
        compare(map.selectedCarId, 0)
    }

    function test_clickOnEmptyMapIsNoCarClick() {
        const map = createTemporaryObject(mapComponent, testCase)
        carClickSpy.target = map
        carClickSpy.clear()
        mouseClick(mapItem(map), 300, 300)
        compare(carClickSpy.count, 0)
    }

    function test_legendCountsCarsInWords() {
        const map = createTemporaryObject(mapComponent, testCase)
        const count = findChild(map, "carCount")
        verify(count)
        compare(count.text, "0 cars")
    }

    function test_scaleBarIsARoundLengthThatFollowsTheZoom() {
        const map = createTemporaryObject(mapComponent, testCase)
        const label = findChild(map, "scaleBarLabel")
        const ruler = findChild(map, "scaleBarRuler")
        verify(label && ruler)
        const before = label.text
        verify(/^(1|2|5)0* k?m$/.test(before), before)
        verify(ruler.width > 30 && ruler.width <= 120, ruler.width)
        for (let i = 0; i < 4; ++i)
            map.zoomIn()
        verify(/^(1|2|5)0* k?m$/.test(label.text), label.text)
        verify(label.text !== before, before + " → " + label.text)
    }

    function test_overlaysShareTheMapsCoordinates() {
        const map = createTemporaryObject(mapComponent, testCase)
        const overlay = overlayComponent.createObject(null)
        map.overlays = [overlay]
        compare(overlay.width, map.width)
        // A coordinate and its screen point map onto each other.
        const at = map.map.toScreen(57.70, 11.97)
        const back = map.map.coordinateAt(at.x, at.y)
        fuzzyCompare(back.lat, 57.70, 1e-9)
        fuzzyCompare(back.lng, 11.97, 1e-9)
        // showLocation centres the point and zooms in to street level.
        const before = map.map.metresPerPixel
        map.map.showLocation(57.70, 11.97)
        const centred = map.map.toScreen(57.70, 11.97)
        fuzzyCompare(centred.x, map.width / 2, 1e-6)
        fuzzyCompare(centred.y, map.height / 2, 1e-6)
        verify(map.map.metresPerPixel < before)
    }

    function test_noServerNoCars() {
        const map = createTemporaryObject(mapComponent, testCase)
        compare(map.carsShown, 0)
        verify(!ConsoleBackend.serving)
    }
}
