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

    function test_noServerNoCars() {
        const map = createTemporaryObject(mapComponent, testCase)
        compare(map.carsShown, 0)
        verify(!ConsoleBackend.serving)
    }
}
