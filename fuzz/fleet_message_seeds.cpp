// Writes the seed corpus of fuzz_fleet_message: feed messages as nodes send them, made by
// encodeFleetDelta and encodeFleetMessage, one file each (and a few a reader must refuse). Rerun it
// when the feed's format changes, so the seeds stay messages of the version the reader knows:
//   build-fuzz/bin/fleet_message_seeds fuzz/corpus/fuzz_fleet_message

#include "cluster/FleetDelta.h"

#include <QDir>
#include <QFile>
#include <cstdio>

using namespace taxicore;

namespace {

constexpr quint64 kNode = 0x5eed0001;

CarSnapshot car(int id, CarState state, uint64_t booking)
{
    CarSnapshot c;
    c.id = id;
    c.position = {57.7075 + id * 0.001, 11.9675 - id * 0.001};
    c.heading = 90.5f;
    c.speedKmh = 31.0f;
    c.state = state;
    c.bookingId = booking;
    c.updatedMs = 1'764'000'000'000 + id;
    c.tripM = state == CarState::OnTrip ? 1234.5 * id : 0; // metres on board, sent for a car on a trip
    return c;
}

FleetDelta cars()
{
    FleetDelta d;
    d.kind = FleetDelta::Kind::Cars;
    d.origin = kNode;
    d.cars = {car(1, CarState::Available, 0), car(2, CarState::ToPickup, 77), car(3, CarState::OnTrip, 78)};
    d.deviceCars = {2};
    // Places on the sender's city file (its checksum); car 3's position was not located.
    d.placesKey = 0x5eedc17f11e5eedULL;
    d.cars[0].road = {true, 10, 12.5};
    d.cars[1].road = {true, 20, 0.0};
    return d;
}

FleetDelta booking(bool priced)
{
    FleetDelta d;
    d.kind = FleetDelta::Kind::Booking;
    d.origin = kNode;
    BookingSnapshot &b = d.booking;
    b.id = 77;
    b.state = BookingState::Assigned;
    b.carId = 2;
    b.riderId = QStringLiteral("rider-Åsa");
    b.pickup = {57.7075, 11.9675};
    b.hasDropoff = true;
    b.dropoff = {57.6900, 11.9800};
    b.etaS = 240;
    b.createdMs = 1'764'000'000'000;
    b.riderTokenHash = QByteArray(32, '\x5a');
    if (priced) {
        BookingPrice p;
        p.surge = 1.4;
        p.hasQuote = true;
        p.quotedDistanceM = 2100;
        p.quotedDurationS = 420;
        p.quote = {45, 25.2, 14, 80, 1.4, 113.7};
        d.price = p;
        d.bookingAgeMs = 5'000; // its age on the sender's monotonic clock (the unpriced one: unknown)
    }
    return d;
}

FleetDelta claim(FleetDelta::Kind kind)
{
    FleetDelta d;
    d.kind = kind;
    d.origin = kNode;
    d.booking.id = 78;
    d.booking.carId = 3;
    return d;
}

bool write(const QDir &dir, const QString &name, const QByteArray &bytes)
{
    QFile file(dir.filePath(name));
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size()) {
        std::fprintf(stderr, "fleet_message_seeds: cannot write %s\n", qPrintable(file.fileName()));
        return false;
    }
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    if (argc != 2) {
        std::fprintf(stderr, "usage: fleet_message_seeds DIR\n");
        return 2;
    }
    const QDir dir(QString::fromLocal8Bit(argv[1]));
    if (!dir.mkpath(QStringLiteral(".")))
        return 1;
    const QByteArray carsPart = encodeFleetDelta(cars());
    FleetDelta noDevices = cars();
    noDevices.deviceCars.clear();
    noDevices.placesKey = 0;
    FleetDelta noPlaces = cars();
    noPlaces.placesKey = 0;
    const QByteArray claimPart = encodeFleetDelta(claim(FleetDelta::Kind::Claim));
    const QByteArray bookingPart = encodeFleetDelta(booking(true));
    const QByteArray unclaimPart = encodeFleetDelta(claim(FleetDelta::Kind::Unclaim));
    FleetDelta elsewhere = claim(FleetDelta::Kind::Claim);
    elsewhere.origin = kNode + 1;

    const bool ok =
        write(dir, "cars", encodeFleetMessage(kNode, {carsPart}))
        // An older node's Cars delta: no device cars after the cars (their count, 0 here, and the
        // road places' checksum, 0, cut off).
        && write(dir, "cars-older-node", encodeFleetDelta(noDevices).chopped(4 + 8))
        // The previous release's: device cars, no road places (the checksum, 0 here, cut off).
        && write(dir, "cars-no-places", encodeFleetMessage(kNode, {encodeFleetDelta(noPlaces).chopped(8)}))
        && write(dir, "booking-priced", encodeFleetMessage(kNode, {bookingPart}))
        && write(dir, "booking-unpriced", encodeFleetMessage(kNode, {encodeFleetDelta(booking(false))}))
        && write(dir, "claim", encodeFleetMessage(kNode, {claimPart}))
        && write(dir, "unclaim", encodeFleetMessage(kNode, {unclaimPart}))
        // A busy moment of one node: cars moved, a car claimed, its booking committed, a claim failed.
        && write(dir, "batch", encodeFleetMessage(kNode, {carsPart, claimPart, bookingPart, unclaimPart}))
        // Refused: a part of another node, a Batch inside a Batch, the last part cut short.
        && write(dir, "batch-other-origin", encodeFleetMessage(kNode, {claimPart, encodeFleetDelta(elsewhere)}))
        && write(dir, "batch-nested",
                 encodeFleetMessage(kNode, {claimPart, encodeFleetMessage(kNode, {claimPart, unclaimPart})}))
        && write(dir, "batch-truncated", encodeFleetMessage(kNode, {claimPart, unclaimPart}).chopped(1));
    return ok ? 0 : 1;
}
