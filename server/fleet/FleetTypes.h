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
    double odometerM = 0;
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
    double startOdometerM = 0;
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
    // wall-clock age at arrival. Host-local: never sent to another node or stored in the ledger.
    int64_t createdMonoMs = 0;
    int64_t pickupMonoMs = 0;
};

// Where a restored booking's ride stood at its last checkpoint (the ledger's progress columns).
struct TripProgress {
    bool valid = false;
    LatLng carAt;
    bool hasDestination = false;
    LatLng destination;
    double tripDistanceM = 0; // metres driven on board
    double tripElapsedS = 0;  // simulated seconds on board
};

} // namespace taxicore
