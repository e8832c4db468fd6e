#pragma once

#include "fleet/FleetTypes.h"
#include "pricing/PricingBoard.h"

#include <QByteArray>
#include <optional>
#include <vector>

namespace taxicore {

// One message of the cluster's change feed (Redis pub/sub): the cars a node moved, one booking as
// it committed it, or a car a booking is being committed for (Claim: the other copies keep it out
// of their candidates meanwhile) and the end of a claim that failed (Unclaim; both name the car
// and the booking in `booking`). `origin` names the sending node, whose copy has the change.
struct FleetDelta {
    enum class Kind : quint8 { Cars = 1, Booking = 2, Claim = 3, Unclaim = 4 };
    Kind kind = Kind::Cars;
    quint64 origin = 0;
    std::vector<CarSnapshot> cars;
    // With cars: those a device reported (not the simulator), so the leader's simulator leaves
    // them alone whichever node the device talks to. After the cars: older readers ignore it.
    std::vector<int> deviceCars;
    BookingSnapshot booking;
    // With a booking: the price it was booked at, so whichever node ends the ride charges it.
    std::optional<BookingPrice> price;
};

QByteArray encodeFleetDelta(const FleetDelta &delta);
// None for bytes that are not a delta of this version (counted and dropped by the reader).
std::optional<FleetDelta> decodeFleetDelta(const QByteArray &bytes);

// One car as the shared live view keeps it (Redis hash taxicore:cars, field = car id).
QByteArray encodeCar(const CarSnapshot &car);
std::optional<CarSnapshot> decodeCar(const QByteArray &bytes);

} // namespace taxicore
