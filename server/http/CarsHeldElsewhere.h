#pragma once

#include <vector>

namespace taxicore {

class FleetStore;

// Cars this node's copy of the fleet holds for a booking it cannot see yet: in a cluster, a car
// another node claimed for a booking it is committing (ClusterFleet's Claim), or one the ledger
// gave to another node's booking whose announcement has not arrived yet (carTakenElsewhere).
// Such a car is on its way to a pickup with no open booking of this copy. A keyed booking that
// found no car looks at them: one of them may be its key's booking, being made on another node
// right now, and until its commit the ledger cannot say so (TaxiApi::answerWithKeyedBooking).
std::vector<int> carsHeldForOtherNodes(const FleetStore &fleet);

// How the cars held for other nodes ended while waitForTheirBookings waited.
enum class HeldCarsEnd {
    // Every one serves a booking this copy holds now: those bookings committed (and were announced).
    Booked,
    // One was let go without a booking (its claim withdrawn: that booking may be trying another
    // car; or expired, or dropped by a resync while its commit still ran), or is still held.
    Unknown,
};

// Waits, sleeping on the calling thread, until none of `cars` is held for another node any more
// or `limitMs` passed.
HeldCarsEnd waitForTheirBookings(const FleetStore &fleet, std::vector<int> cars, int limitMs);

} // namespace taxicore
