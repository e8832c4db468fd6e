#pragma once

#include <vector>

namespace taxicore {

class FleetStore;

// Cars this node's copy of the fleet holds for a booking it cannot see yet: in a cluster, a car
// another node claimed for a booking it is committing (ClusterFleet's Claim), or one the ledger
// gave to another node's booking whose announcement has not arrived yet (carTakenElsewhere).
// Such a car is on its way to a pickup with no booking of this copy. A keyed booking that found no
// car looks at them: one of them may be its key's booking, being made on another node right now,
// and until its commit the ledger cannot say so (TaxiApi::answerWithKeyedBooking).
std::vector<int> carsHeldForOtherNodes(const FleetStore &fleet);

// Waits, sleeping on the calling thread, until none of `cars` is held for another node any more
// (its booking announced, or its claim withdrawn or expired) or `limitMs` passed; true when every
// one of them was let go in time.
bool waitUntilLetGo(const FleetStore &fleet, std::vector<int> cars, int limitMs);

} // namespace taxicore
