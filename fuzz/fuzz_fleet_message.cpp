// Fuzzes a message of the cluster's feed (the Redis channel taxicore:fleet) as a node reads one from
// another: decodeFleetMessage (server/cluster/FleetDelta). Another node, an older one or a stray
// publisher may send anything; what the reader accepts must keep the bounds it promises and be
// what encodeFleetMessage would send for those deltas, so it reads back the same.

#include "FuzzChecks.h"
#include "cluster/FleetDelta.h"

#include <cmath>

using namespace taxicore;

namespace {

// The message a node sends for these deltas, all of the first one's origin.
QByteArray reencoded(const std::vector<FleetDelta> &deltas)
{
    std::vector<QByteArray> parts;
    parts.reserve(deltas.size());
    for (const FleetDelta &delta : deltas)
        parts.push_back(encodeFleetDelta(delta));
    return encodeFleetMessage(deltas.front().origin, parts);
}

void checkBounds(const std::vector<FleetDelta> &deltas)
{
    TAXICORE_FUZZ_CHECK(!deltas.empty() && deltas.size() <= kMaxDeltasPerMessage);
    for (const FleetDelta &delta : deltas) {
        TAXICORE_FUZZ_CHECK(delta.origin == deltas.front().origin); // one node's message
        TAXICORE_FUZZ_CHECK(delta.kind != FleetDelta::Kind::Batch); // a Batch is never nested
        TAXICORE_FUZZ_CHECK(delta.cars.size() <= kMaxCarsPerDelta);
        TAXICORE_FUZZ_CHECK(delta.deviceCars.size() <= delta.cars.size());
        if (delta.kind == FleetDelta::Kind::Claim || delta.kind == FleetDelta::Kind::Unclaim)
            TAXICORE_FUZZ_CHECK(delta.booking.carId > 0);
        // Only states that exist and places on the globe reach a node's copy.
        for (const CarSnapshot &car : delta.cars) {
            TAXICORE_FUZZ_CHECK(car.state <= CarState::Waiting && std::isfinite(car.position.lat)
                                && std::abs(car.position.lat) <= 90 && std::isfinite(car.position.lng)
                                && std::abs(car.position.lng) <= 180);
            // Road places only with the key they were located with, and each a distance.
            TAXICORE_FUZZ_CHECK(!car.road.located
                                || (delta.placesKey != 0 && std::isfinite(car.road.offsetM) && car.road.offsetM >= 0));
        }
        if (delta.kind == FleetDelta::Kind::Booking)
            TAXICORE_FUZZ_CHECK(delta.booking.state <= BookingState::Expired && std::isfinite(delta.booking.pickup.lat)
                                && std::isfinite(delta.booking.fare));
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const std::optional<std::vector<FleetDelta>> deltas = decodeFleetMessage(fuzz::bytesOf(data, size));
    if (!deltas)
        return 0;
    checkBounds(*deltas);

    // Bytes compared, not values. The first re-encoding may
    // differ from the input (ignored trailing bytes, a bool stored as 7); from then on it is fixed.
    const QByteArray canonical = reencoded(*deltas);
    const std::optional<std::vector<FleetDelta>> again = decodeFleetMessage(canonical);
    TAXICORE_FUZZ_CHECK(again && again->size() == deltas->size());
    for (size_t i = 0; i < deltas->size(); ++i)
        TAXICORE_FUZZ_CHECK((*again)[i].kind == (*deltas)[i].kind && (*again)[i].origin == (*deltas)[i].origin);
    TAXICORE_FUZZ_CHECK(reencoded(*again) == canonical);

    // A Batch's parts are sized: one byte missing or one too many refuses all of it.
    if (deltas->size() > 1) {
        TAXICORE_FUZZ_CHECK(!decodeFleetMessage(canonical.chopped(1)));
        TAXICORE_FUZZ_CHECK(!decodeFleetMessage(canonical + '\0'));
    }
    return 0;
}
