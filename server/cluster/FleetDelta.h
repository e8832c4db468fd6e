#pragma once

#include "fleet/FleetTypes.h"
#include "pricing/PricingBoard.h"

#include <QByteArray>
#include <optional>
#include <vector>

namespace taxicore {

// One change on the cluster's feed (Redis pub/sub): the cars a node moved, one booking as it
// committed it, or a car a booking is being committed for (Claim: the other copies keep it out of
// their candidates meanwhile) and the end of a claim that failed (Unclaim; both name the car and
// the booking in `booking`). `origin` names the sending node, whose copy has the change. A message
// on the channel is one delta, or several of one node in the order they happened (a Batch:
// encodeFleetMessage), so a node's busy moment costs every node one message, not one per change.
struct FleetDelta {
    enum class Kind : quint8 { Cars = 1, Booking = 2, Claim = 3, Unclaim = 4, Batch = 5 };
    Kind kind = Kind::Cars;
    quint64 origin = 0;
    std::vector<CarSnapshot> cars;
    // With cars: those a device reported (not the simulator), so the leader's simulator leaves
    // them alone whichever node the device talks to. After the cars: older readers ignore it.
    std::vector<int> deviceCars;
    // With cars: what the sender located them with (SharedMemoryFleet::placesKey: its city file's
    // checksum and snapping rules; 0: no places sent), and each car's `road` its place there as the
    // sender's copy stored it with the position. A node with the same key stores that place as sent
    // instead of snapping the position again: a move is snapped once, by the node that made it, not
    // once by every node. After the device cars: older readers ignore it.
    quint64 placesKey = 0;
    BookingSnapshot booking;
    // With a booking: the price it was booked at, so whichever node ends the ride charges it.
    std::optional<BookingPrice> price;
    // With a booking: its age and time on board on the sender's monotonic clock (ms; -1: unknown),
    // so its durations never depend on two hosts' wall clocks. Read from the wire, and written as
    // they are when set; else encodeFleetDelta takes them from the booking's own stamps
    // (BookingSnapshot::createdMonoMs, pickupMonoMs). bookingStampedHere() turns them into stamps
    // on this host's monotonic clock (the time a message waited on its sender is not counted).
    qint64 bookingAgeMs = -1;
    qint64 bookingOnBoardMs = -1;
    BookingSnapshot bookingStampedHere() const;
};

// A Cars delta carries at most this many cars: a flush of the busiest tick fits, garbage does not
// make the reader allocate.
inline constexpr quint32 kMaxCarsPerDelta = 100'000;
QByteArray encodeFleetDelta(const FleetDelta &delta);
// None for bytes that are not a delta of this version (counted and dropped by the reader); a
// Batch is not a delta (decodeFleetMessage reads both).
std::optional<FleetDelta> decodeFleetDelta(const QByteArray &bytes);

// One message of the feed from deltas encoded by encodeFleetDelta, all of node `origin`: a lone
// delta as it is, several as one Batch (at most kMaxDeltasPerMessage: the caller splits).
inline constexpr quint32 kMaxDeltasPerMessage = 4096;
QByteArray encodeFleetMessage(quint64 origin, const std::vector<QByteArray> &deltas);
// The deltas of a message in the order they were sent; none if any part is unreadable, or a
// Batch holds another, or names another origin than its parts.
std::optional<std::vector<FleetDelta>> decodeFleetMessage(const QByteArray &bytes);

// One car as the shared live view keeps it (Redis hash taxicore:cars, field = car id).
QByteArray encodeCar(const CarSnapshot &car);
std::optional<CarSnapshot> decodeCar(const QByteArray &bytes);

} // namespace taxicore
