#pragma once

#include "city/Geo.h"
#include "fleet/BookingState.h"
#include "fleet/CarState.h"

#include <QByteArray>
#include <QString>
#include <cstdint>

namespace taxicore {

// Where a car's position lies on the road network: the segment and offset of the city's snap of
// that very position (city::RoadPoint's), stored with it so road ETAs need not snap it again.
struct RoadPlace {
    bool located = false; // false: no city located it (none loaded, or not snappable)
    uint32_t segment = 0;
    double offsetM = 0;
};

// A consistent copy of one car's slot.
struct CarSnapshot {
    int id = 0;
    LatLng position;
    float heading = 0;
    float speedKmh = 0;
    CarState state = CarState::Offline;
    uint64_t bookingId = 0;
    int64_t updatedMs = 0;
    // Metres this copy of the fleet saw the car move since the process started: the sum of the
    // steps between the positions it stored, its own and those other nodes sent. Host-local: the
    // value another node sends is not taken over (two nodes moving one car at once would fork it,
    // and a trip metered on one node's at the pickup and another's at the end mixed the two).
    double odometerM = 0;
    // In a position that travels to another copy (the feed, the live view): when the car is on a
    // trip, its metres on board as the node that made the move metered them, else 0. The copy
    // that applies the position takes them (SharedMemoryFleet::applyRemotePosition): a move it
    // did not see step by step (Redis was away) is then never counted on top of metres that hold it.
    double tripM = 0;
    RoadPlace road; // of `position`, read with it
};

struct NearbyCar {
    CarSnapshot car;
    double distanceM = 0;
};

// A consistent copy of one booking's slot.
struct BookingSnapshot {
    uint64_t id = 0;
    BookingState state = BookingState::Requested;
    int carId = 0;
    QString riderId;
    LatLng pickup;
    bool hasDropoff = false;
    LatLng dropoff;
    uint32_t etaS = 0;
    int64_t createdMs = 0;
    int64_t arrivedMs = 0;
    int64_t pickupMs = 0;
    int64_t endedMs = 0;
    // On trip: where the car's odometer on THIS host stood at the pickup (less the metres on board
    // before this copy heard of it): host-local like the odometer, never taken from another node.
    double startOdometerM = 0;
    // Completed: the trip's metres on board, as billed. On trip, in a booking that travels to
    // another copy (the feed's announce, the ledger's resync): the metres on board so far, as its
    // sender measured them, which the receiver meters on from (SharedMemoryFleet::applyRemoteBooking).
    double distanceM = 0;
    double fare = 0;
    QByteArray riderTokenHash;   // empty: no owner recorded (see BookingSlot::riderTokenHash)
    bool hasDestination = false; // a trip without a drop-off: where the simulator drives it
    LatLng destination;
    double durationS = 0; // simulated seconds on board, when completed
    // createdMs and pickupMs on this host's CLOCK_MONOTONIC (0: none yet): the durations a booking
    // is judged and charged by (pickup timeout, time on board) come from these, so a step of the
    // wall clock neither expires every waiting booking nor bills an hour. Set when the booking is
    // made or picked up here; one that arrives from elsewhere (another node, a restore) gets its
    // wall-clock age at arrival, a restore its checkpointed age where the ledger has one
    // (TripProgress::waitedS). Host-local: never sent to another node or stored in the ledger.
    int64_t createdMonoMs = 0;
    int64_t pickupMonoMs = 0;
};

// The metres an on-trip booking's car has driven on board, by this host's odometer (`odometerM`,
// the car's now).
inline double metresOnBoard(const BookingSnapshot &b, double odometerM)
{
    return odometerM > b.startOdometerM ? odometerM - b.startOdometerM : 0.0;
}

// Where a restored booking's ride stood at its last checkpoint (the ledger's progress columns).
struct TripProgress {
    bool valid = false;
    LatLng carAt;
    bool hasDestination = false;
    LatLng destination;
    double tripDistanceM = 0; // metres driven on board
    double tripElapsedS = 0;  // simulated seconds on board
    // Simulated seconds since the booking was made, on the monotonic clock, at the checkpoint's
    // wall-clock time checkpointMs (0: an older ledger without it).
    double waitedS = 0;
    int64_t checkpointMs = 0;
};

} // namespace taxicore
