#pragma once

#include "fleet/FleetTypes.h"

#include <QByteArray>
#include <optional>
#include <vector>

namespace taxicore {

// One message of the cluster's change feed (Redis pub/sub): the cars a node moved, or one booking
// as it committed it. `origin` names the sending node, whose own copy already holds the change.
struct FleetDelta {
    enum class Kind : quint8 { Cars = 1, Booking = 2 };
    Kind kind = Kind::Cars;
    quint64 origin = 0;
    std::vector<CarSnapshot> cars;
    BookingSnapshot booking;
};

QByteArray encodeFleetDelta(const FleetDelta &delta);
// None for bytes that are not a delta of this version (counted and dropped by the reader).
std::optional<FleetDelta> decodeFleetDelta(const QByteArray &bytes);

// One car as the shared live view keeps it (Redis hash taxicore:cars, field = car id).
QByteArray encodeCar(const CarSnapshot &car);
std::optional<CarSnapshot> decodeCar(const QByteArray &bytes);

} // namespace taxicore
