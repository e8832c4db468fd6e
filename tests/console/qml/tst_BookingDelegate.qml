import QtQuick
import QtTest
import TaxiCore

// A booking row: what it shows for open and closed bookings, and its cancel button (only where the
// server accepts a cancel: the model's canCancel).
TestCase {
    id: testCase
    name: "BookingDelegate"
    when: windowShown
    visible: true // TestCase is invisible by default: no input, no effective visibility
    width: 400
    height: 200

    Component {
        id: delegateComponent
        BookingDelegate {
            width: 380
        }
    }
    SignalSpy {
        id: cancelSpy
        signalName: "cancelRequested"
    }
    SignalSpy {
        id: reassignSpy
        signalName: "reassignRequested"
    }

    function make(props) {
        const base = { index: 0, bookingId: 42, bookingState: "assigned", isOpen: true, rider: "alice",
                       carId: 7, etaSeconds: 125, fare: 0, canCancel: true }
        for (const k in props)
            base[k] = props[k]
        const d = createTemporaryObject(delegateComponent, testCase, base)
        verify(d)
        return d
    }

    function cancelButton(item) { return findChild(item, "cancelButton") }
    function reassignButton(item) { return findChild(item, "reassignButton") }

    function test_openBookingCanBeCancelled() {
        const d = make({})
        const button = cancelButton(d)
        verify(button)
        verify(button.visible)
        cancelSpy.target = d
        cancelSpy.clear()
        mouseClick(button)
        compare(cancelSpy.count, 1)
    }

    function test_closedBookingHasNoCancel() {
        const d = make({ bookingState: "completed", isOpen: false, fare: 123.5, canCancel: false })
        verify(!cancelButton(d).visible)
    }

    function test_waitingBookingCanBeReassigned() {
        for (const state of ["assigned", "arriving"]) {
            const d = make({ bookingState: state })
            const button = reassignButton(d)
            verify(button.visible, state)
            reassignSpy.target = d
            reassignSpy.clear()
            mouseClick(button)
            compare(reassignSpy.count, 1)
        }
    }

    function test_onlyWaitingBookingsShowReassign() {
        verify(!reassignButton(make({ bookingState: "on_trip", canCancel: false })).visible)
        verify(!reassignButton(make({ bookingState: "completed", isOpen: false, canCancel: false })).visible)
        verify(!reassignButton(make({ bookingState: "cancelled", isOpen: false, canCancel: false })).visible)
    }

    function test_stateColours() {
        const d = make({})
        compare(d.stateColor("on_trip"), "#2f6fd6")
        compare(d.stateColor("cancelled"), "#c0392b")
        compare(d.stateColor("unknown"), "#8a8a8a")
    }

    // Nobody boarded in time: listed as expired in its own colour, closed, nothing to cancel.
    function test_expiredBookingIsListedAsExpired() {
        const d = make({ bookingState: "expired", isOpen: false, canCancel: false })
        compare(d.stateColor("expired"), "#8e5a9b")
        verify(!cancelButton(d).visible)
        verify(!reassignButton(d).visible)
        verify(findChild(d, "stateLabel").text === "expired")
    }

    // The server answers 409 to a cancel on the trip: no × there, though the booking is open.
    function test_onTripBookingOffersNoCancel() {
        const d = make({ bookingState: "on_trip", canCancel: false })
        verify(!cancelButton(d).visible)
        verify(!reassignButton(d).visible)
        compare(findChild(d, "noteLabel").text, "rider aboard")
    }

    // The car is at the pickup: nothing left to count down.
    function test_arrivingBookingShowsNoEta() {
        const d = make({ bookingState: "arriving", etaSeconds: 0 })
        compare(findChild(d, "noteLabel").text, "car at pickup")
        verify(cancelButton(d).visible)
        compare(findChild(make({ bookingState: "assigned", etaSeconds: 125 }), "noteLabel").text, "ETA 2 min")
    }

    function test_fareHasItsCurrency() {
        const d = make({ bookingState: "completed", isOpen: false, fare: 123.5, canCancel: false, currency: "SEK" })
        compare(findChild(d, "noteLabel").text, "fare 123.50 SEK")
    }
}
