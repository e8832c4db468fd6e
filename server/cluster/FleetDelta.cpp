#include "cluster/FleetDelta.h"

#include "region/Clock.h"

#include "cluster/WireBytes.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace taxicore {

namespace {

constexpr quint32 kMagic = 0x54434644; // "TCFD"
// 2: a booking's ages on the sender's monotonic clock. 3: a car's metres on board of its trip
// (CarSnapshot::tripM) where the sender's odometer went (no other host can use that one).
constexpr quint8 kVersion = 3;
// What writeCar() writes: the float heading and speed go as doubles too (DoublePrecision).
constexpr qsizetype kCarBytes = 4 + 8 + 8 + 8 + 8 + 1 + 8 + 8 + 8;

// What a node may store from the feed: a state that exists, a place on the globe, finite numbers.
// A NaN or an unknown state byte (from a bug or a foreign writer on the channel) would otherwise
// land in this node's copy and in every answer built from it.
bool onTheGlobe(LatLng p)
{
    return std::isfinite(p.lat) && std::isfinite(p.lng) && std::abs(p.lat) <= 90 && std::abs(p.lng) <= 180;
}

bool plausibleCar(const CarSnapshot &c)
{
    return c.state <= CarState::Waiting && onTheGlobe(c.position) && std::isfinite(c.heading)
           && std::isfinite(c.speedKmh) && std::isfinite(c.tripM) && c.tripM >= 0;
}

bool plausibleBooking(const BookingSnapshot &b)
{
    return b.state <= BookingState::Expired && onTheGlobe(b.pickup) && onTheGlobe(b.dropoff)
           && onTheGlobe(b.destination) && std::isfinite(b.startOdometerM) && std::isfinite(b.distanceM)
           && std::isfinite(b.fare) && std::isfinite(b.durationS);
}

void writeCar(WireWriter &out, const CarSnapshot &c)
{
    out.integer(qint32(c.id));
    out.real(c.position.lat);
    out.real(c.position.lng);
    out.real(c.heading);
    out.real(c.speedKmh);
    out.integer(quint8(c.state));
    out.integer(quint64(c.bookingId));
    out.integer(qint64(c.updatedMs));
    out.real(c.tripM);
}

// A car's road place on the sender's city: segment + 1 (0: not located) and the offset along it.
void writeRoadPlace(WireWriter &out, const RoadPlace &road)
{
    const bool located = road.located && road.segment != std::numeric_limits<uint32_t>::max();
    out.integer(quint32(located ? road.segment + 1 : 0));
    out.real(located ? road.offsetM : 0.0);
}

// Whether the segment is one of the reader's city is for the reader's fleet to check
// (SharedMemoryFleet::applyRemotePosition); a negative or non-finite offset is garbage here.
bool readRoadPlace(WireReader &in, RoadPlace &road)
{
    const quint32 segment = in.integer<quint32>();
    const double offset = in.real();
    if (!in.ok() || !std::isfinite(offset) || offset < 0)
        return false;
    road = segment == 0 ? RoadPlace{} : RoadPlace{true, segment - 1, offset};
    return true;
}

bool readCar(WireReader &in, CarSnapshot &c)
{
    c.id = in.integer<qint32>();
    c.position.lat = in.real();
    c.position.lng = in.real();
    c.heading = float(in.real());
    c.speedKmh = float(in.real());
    c.state = static_cast<CarState>(in.integer<quint8>());
    c.bookingId = in.integer<quint64>();
    c.updatedMs = in.integer<qint64>();
    c.tripM = in.real();
    return in.ok() && plausibleCar(c);
}

constexpr qint64 kUnknownAge = -1;
constexpr qint64 kMaxAgeMs = 400LL * 24 * 3600 * 1000;

qint64 ageOf(int64_t monotonicStamp, int64_t now)
{
    return monotonicStamp != 0 ? std::max<qint64>(0, now - monotonicStamp) : kUnknownAge;
}

void writeBooking(WireWriter &out, const BookingSnapshot &b)
{
    out.integer(quint64(b.id));
    out.integer(quint8(b.state));
    out.integer(qint32(b.carId));
    out.string(b.riderId);
    out.real(b.pickup.lat);
    out.real(b.pickup.lng);
    out.boolean(b.hasDropoff);
    out.real(b.dropoff.lat);
    out.real(b.dropoff.lng);
    out.integer(quint32(b.etaS));
    for (const int64_t stamp : {b.createdMs, b.arrivedMs, b.pickupMs, b.endedMs})
        out.integer(qint64(stamp));
    out.real(b.startOdometerM);
    out.real(b.distanceM);
    out.real(b.fare);
    out.bytes(b.riderTokenHash);
    out.boolean(b.hasDestination);
    out.real(b.destination.lat);
    out.real(b.destination.lng);
    out.real(b.durationS);
}

bool readBooking(WireReader &in, BookingSnapshot &b)
{
    b.id = in.integer<quint64>();
    b.state = static_cast<BookingState>(in.integer<quint8>());
    b.carId = in.integer<qint32>();
    b.riderId = in.string();
    b.pickup.lat = in.real();
    b.pickup.lng = in.real();
    b.hasDropoff = in.boolean();
    b.dropoff.lat = in.real();
    b.dropoff.lng = in.real();
    b.etaS = in.integer<quint32>();
    b.createdMs = in.integer<qint64>();
    b.arrivedMs = in.integer<qint64>();
    b.pickupMs = in.integer<qint64>();
    b.endedMs = in.integer<qint64>();
    b.startOdometerM = in.real();
    b.distanceM = in.real();
    b.fare = in.real();
    b.riderTokenHash = in.bytes();
    b.hasDestination = in.boolean();
    b.destination.lat = in.real();
    b.destination.lng = in.real();
    b.durationS = in.real();
    return in.ok() && plausibleBooking(b);
}

void writePrice(WireWriter &out, const std::optional<BookingPrice> &price)
{
    out.boolean(bool(price));
    if (!price)
        return;
    const FareBreakdown &q = price->quote;
    out.real(price->surge);
    out.boolean(price->hasQuote);
    for (const double value : {price->quotedDistanceM, price->quotedDurationS, q.base, q.distanceCharge, q.timeCharge,
                               q.minimum, q.surge, q.total})
        out.real(value);
}

bool readPrice(WireReader &in, std::optional<BookingPrice> &price)
{
    if (in.boolean()) {
        BookingPrice p;
        FareBreakdown &q = p.quote;
        p.surge = in.real();
        p.hasQuote = in.boolean();
        for (double *value : {&p.quotedDistanceM, &p.quotedDurationS, &q.base, &q.distanceCharge, &q.timeCharge,
                              &q.minimum, &q.surge, &q.total})
            *value = in.real();
        for (const double value : {p.surge, p.quotedDistanceM, p.quotedDurationS, q.base, q.distanceCharge,
                                   q.timeCharge, q.minimum, q.surge, q.total})
            if (!std::isfinite(value))
                return false;
        price = p;
    }
    return in.ok();
}

void writeHeader(WireWriter &out, FleetDelta::Kind kind, quint64 origin)
{
    out.integer(kMagic);
    out.integer(kVersion);
    out.integer(quint8(kind));
    out.integer(origin);
}

// The header's kind, or none when the bytes are not of this feed version.
std::optional<quint8> readHeader(WireReader &in, quint64 &origin)
{
    const quint32 magic = in.integer<quint32>();
    const quint8 version = in.integer<quint8>();
    const quint8 kind = in.integer<quint8>();
    origin = in.integer<quint64>();
    if (!in.ok() || magic != kMagic || version != kVersion)
        return std::nullopt;
    return kind;
}

} // namespace

BookingSnapshot FleetDelta::bookingStampedHere() const
{
    BookingSnapshot b = booking;
    const int64_t now = clock::monotonicMs();
    b.createdMonoMs = bookingAgeMs >= 0 ? now - bookingAgeMs : 0;
    b.pickupMonoMs = bookingOnBoardMs >= 0 ? now - bookingOnBoardMs : 0;
    return b;
}

QByteArray encodeFleetDelta(const FleetDelta &delta)
{
    QByteArray bytes;
    if (delta.kind == FleetDelta::Kind::Cars)
        bytes.reserve(32 + qsizetype(delta.cars.size()) * (kCarBytes + 16)); // + a road place and a device id each
    WireWriter out(bytes);
    writeHeader(out, delta.kind, delta.origin);
    if (delta.kind == FleetDelta::Kind::Cars) {
        out.integer(quint32(delta.cars.size()));
        for (const CarSnapshot &c : delta.cars)
            writeCar(out, c);
        out.integer(quint32(delta.deviceCars.size()));
        for (const int id : delta.deviceCars)
            out.integer(qint32(id));
        out.integer(delta.placesKey);
        if (delta.placesKey != 0)
            for (const CarSnapshot &c : delta.cars)
                writeRoadPlace(out, c.road);
    } else if (delta.kind == FleetDelta::Kind::Booking) {
        writeBooking(out, delta.booking);
        writePrice(out, delta.price);
        const int64_t now = clock::monotonicMs();
        out.integer(qint64(delta.bookingAgeMs >= 0 ? delta.bookingAgeMs : ageOf(delta.booking.createdMonoMs, now)));
        out.integer(
            qint64(delta.bookingOnBoardMs >= 0 ? delta.bookingOnBoardMs : ageOf(delta.booking.pickupMonoMs, now)));
    } else {
        out.integer(quint64(delta.booking.id));
        out.integer(qint32(delta.booking.carId));
    }
    return bytes;
}

std::optional<FleetDelta> decodeFleetDelta(const QByteArray &bytes)
{
    WireReader in(bytes);
    FleetDelta delta;
    const auto kind = readHeader(in, delta.origin);
    if (!kind)
        return std::nullopt;
    delta.kind = static_cast<FleetDelta::Kind>(*kind);
    if (delta.kind == FleetDelta::Kind::Cars) {
        const quint32 count = in.integer<quint32>();
        if (!in.ok() || count > kMaxCarsPerDelta || qsizetype(count) * kCarBytes > in.left())
            return std::nullopt;
        delta.cars.resize(count);
        for (CarSnapshot &c : delta.cars)
            if (!readCar(in, c))
                return std::nullopt;
        if (in.atEnd())
            return delta; // from a node that does not send device cars
        const quint32 devices = in.integer<quint32>();
        if (!in.ok() || devices > count)
            return std::nullopt;
        delta.deviceCars.resize(devices);
        for (int &id : delta.deviceCars)
            id = in.integer<qint32>();
        if (!in.ok())
            return std::nullopt;
        if (in.atEnd())
            return delta; // from a node that does not send road places
        delta.placesKey = in.integer<quint64>();
        if (delta.placesKey != 0)
            for (CarSnapshot &c : delta.cars)
                if (!readRoadPlace(in, c.road))
                    return std::nullopt;
        if (!in.ok())
            return std::nullopt;
        return delta;
    }
    if (delta.kind == FleetDelta::Kind::Booking && readBooking(in, delta.booking) && readPrice(in, delta.price)) {
        delta.bookingAgeMs = in.integer<qint64>();
        delta.bookingOnBoardMs = in.integer<qint64>();
        if (!in.ok())
            return std::nullopt;
        if (delta.bookingAgeMs < 0 || delta.bookingAgeMs > kMaxAgeMs)
            delta.bookingAgeMs = kUnknownAge;
        if (delta.bookingOnBoardMs < 0 || delta.bookingOnBoardMs > kMaxAgeMs || delta.booking.pickupMs == 0)
            delta.bookingOnBoardMs = kUnknownAge;
        return delta;
    }
    if (delta.kind == FleetDelta::Kind::Claim || delta.kind == FleetDelta::Kind::Unclaim) {
        const quint64 booking = in.integer<quint64>();
        const qint32 car = in.integer<qint32>();
        if (!in.ok() || car <= 0)
            return std::nullopt;
        delta.booking.id = booking;
        delta.booking.carId = car;
        return delta;
    }
    return std::nullopt;
}

QByteArray encodeFleetMessage(quint64 origin, const std::vector<QByteArray> &deltas)
{
    if (deltas.size() == 1)
        return deltas.front();
    QByteArray bytes;
    qsizetype size = 18; // the header and the count
    for (const QByteArray &delta : deltas)
        size += 4 + delta.size();
    bytes.reserve(size);
    WireWriter out(bytes);
    writeHeader(out, FleetDelta::Kind::Batch, origin);
    out.integer(quint32(deltas.size()));
    for (const QByteArray &delta : deltas) {
        out.integer(quint32(delta.size()));
        out.raw(delta);
    }
    return bytes;
}

std::optional<std::vector<FleetDelta>> decodeFleetMessage(const QByteArray &bytes)
{
    WireReader in(bytes);
    quint64 origin = 0;
    const auto kind = readHeader(in, origin);
    if (!kind)
        return std::nullopt;
    std::vector<FleetDelta> deltas;
    if (*kind != quint8(FleetDelta::Kind::Batch)) {
        auto one = decodeFleetDelta(bytes);
        if (!one)
            return std::nullopt;
        deltas.push_back(std::move(*one));
        return deltas;
    }
    const quint32 count = in.integer<quint32>();
    if (!in.ok() || count == 0 || count > kMaxDeltasPerMessage)
        return std::nullopt;
    deltas.reserve(count);
    for (quint32 i = 0; i < count; ++i) {
        const quint32 size = in.integer<quint32>();
        if (!in.ok() || qsizetype(size) > in.left())
            return std::nullopt;
        // A view, not a copy: `bytes` outlives it. A Batch inside is refused there.
        auto part = decodeFleetDelta(QByteArray::fromRawData(in.position(), qsizetype(size)));
        if (!part || part->origin != origin)
            return std::nullopt;
        deltas.push_back(std::move(*part));
        in.skip(qsizetype(size));
    }
    if (!in.atEnd())
        return std::nullopt;
    return deltas;
}

QByteArray encodeCar(const CarSnapshot &car)
{
    QByteArray bytes;
    bytes.reserve(kCarBytes);
    WireWriter out(bytes);
    writeCar(out, car);
    return bytes;
}

std::optional<CarSnapshot> decodeCar(const QByteArray &bytes)
{
    WireReader in(bytes);
    CarSnapshot car;
    if (!readCar(in, car))
        return std::nullopt;
    return car;
}

} // namespace taxicore
