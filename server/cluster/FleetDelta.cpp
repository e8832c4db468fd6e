#include "cluster/FleetDelta.h"

#include "region/Clock.h"

#include <QDataStream>
#include <algorithm>
#include <QIODevice>
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

void writeCar(QDataStream &out, const CarSnapshot &c)
{
    out << qint32(c.id) << c.position.lat << c.position.lng << c.heading << c.speedKmh << quint8(c.state)
        << quint64(c.bookingId) << qint64(c.updatedMs) << c.tripM;
}

// A car's road place on the sender's city: segment + 1 (0: not located) and the offset along it.
void writeRoadPlace(QDataStream &out, const RoadPlace &road)
{
    const bool located = road.located && road.segment != std::numeric_limits<uint32_t>::max();
    out << quint32(located ? road.segment + 1 : 0) << (located ? road.offsetM : 0.0);
}

// Whether the segment is one of the reader's city is for the reader's fleet to check
// (SharedMemoryFleet::applyRemotePosition); a negative or non-finite offset is garbage here.
bool readRoadPlace(QDataStream &in, RoadPlace &road)
{
    quint32 segment = 0;
    double offset = 0;
    in >> segment >> offset;
    if (in.status() != QDataStream::Ok || !std::isfinite(offset) || offset < 0)
        return false;
    road = segment == 0 ? RoadPlace{} : RoadPlace{true, segment - 1, offset};
    return true;
}

bool readCar(QDataStream &in, CarSnapshot &c)
{
    qint32 id = 0;
    quint8 state = 0;
    quint64 booking = 0;
    qint64 updated = 0;
    in >> id >> c.position.lat >> c.position.lng >> c.heading >> c.speedKmh >> state >> booking >> updated >> c.tripM;
    c.id = id;
    c.state = static_cast<CarState>(state);
    c.bookingId = booking;
    c.updatedMs = updated;
    return in.status() == QDataStream::Ok && plausibleCar(c);
}

constexpr qint64 kUnknownAge = -1;
constexpr qint64 kMaxAgeMs = 400LL * 24 * 3600 * 1000;

qint64 ageOf(int64_t monotonicStamp, int64_t now)
{
    return monotonicStamp != 0 ? std::max<qint64>(0, now - monotonicStamp) : kUnknownAge;
}

void writeBooking(QDataStream &out, const BookingSnapshot &b)
{
    out << quint64(b.id) << quint8(b.state) << qint32(b.carId) << b.riderId << b.pickup.lat << b.pickup.lng
        << b.hasDropoff << b.dropoff.lat << b.dropoff.lng << quint32(b.etaS) << qint64(b.createdMs)
        << qint64(b.arrivedMs) << qint64(b.pickupMs) << qint64(b.endedMs) << b.startOdometerM << b.distanceM << b.fare
        << b.riderTokenHash << b.hasDestination << b.destination.lat << b.destination.lng << b.durationS;
}

bool readBooking(QDataStream &in, BookingSnapshot &b)
{
    quint64 id = 0;
    quint8 state = 0;
    qint32 car = 0;
    quint32 eta = 0;
    qint64 created = 0, arrived = 0, pickedUp = 0, ended = 0;
    in >> id >> state >> car >> b.riderId >> b.pickup.lat >> b.pickup.lng >> b.hasDropoff >> b.dropoff.lat
        >> b.dropoff.lng >> eta >> created >> arrived >> pickedUp >> ended >> b.startOdometerM >> b.distanceM >> b.fare
        >> b.riderTokenHash >> b.hasDestination >> b.destination.lat >> b.destination.lng >> b.durationS;
    b.id = id;
    b.state = static_cast<BookingState>(state);
    b.carId = car;
    b.etaS = eta;
    b.createdMs = created;
    b.arrivedMs = arrived;
    b.pickupMs = pickedUp;
    b.endedMs = ended;
    return in.status() == QDataStream::Ok && plausibleBooking(b);
}

void writePrice(QDataStream &out, const std::optional<BookingPrice> &price)
{
    out << bool(price);
    if (!price)
        return;
    const FareBreakdown &q = price->quote;
    out << price->surge << price->hasQuote << price->quotedDistanceM << price->quotedDurationS << q.base
        << q.distanceCharge << q.timeCharge << q.minimum << q.surge << q.total;
}

bool readPrice(QDataStream &in, std::optional<BookingPrice> &price)
{
    bool has = false;
    in >> has;
    if (has) {
        BookingPrice p;
        FareBreakdown &q = p.quote;
        in >> p.surge >> p.hasQuote >> p.quotedDistanceM >> p.quotedDurationS >> q.base >> q.distanceCharge
            >> q.timeCharge >> q.minimum >> q.surge >> q.total;
        for (const double value : {p.surge, p.quotedDistanceM, p.quotedDurationS, q.base, q.distanceCharge,
                                   q.timeCharge, q.minimum, q.surge, q.total})
            if (!std::isfinite(value))
                return false;
        price = p;
    }
    return in.status() == QDataStream::Ok;
}

QDataStream &prepared(QDataStream &stream)
{
    stream.setVersion(QDataStream::Qt_6_4);
    stream.setFloatingPointPrecision(QDataStream::DoublePrecision);
    return stream;
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
    QDataStream out(&bytes, QIODevice::WriteOnly);
    prepared(out) << kMagic << kVersion << quint8(delta.kind) << delta.origin;
    if (delta.kind == FleetDelta::Kind::Cars) {
        out << quint32(delta.cars.size());
        for (const CarSnapshot &c : delta.cars)
            writeCar(out, c);
        out << quint32(delta.deviceCars.size());
        for (const int id : delta.deviceCars)
            out << qint32(id);
        out << delta.placesKey;
        if (delta.placesKey != 0)
            for (const CarSnapshot &c : delta.cars)
                writeRoadPlace(out, c.road);
    } else if (delta.kind == FleetDelta::Kind::Booking) {
        writeBooking(out, delta.booking);
        writePrice(out, delta.price);
        const int64_t now = clock::monotonicMs();
        out << (delta.bookingAgeMs >= 0 ? delta.bookingAgeMs : ageOf(delta.booking.createdMonoMs, now))
            << (delta.bookingOnBoardMs >= 0 ? delta.bookingOnBoardMs : ageOf(delta.booking.pickupMonoMs, now));
    } else {
        out << quint64(delta.booking.id) << qint32(delta.booking.carId);
    }
    return bytes;
}

std::optional<FleetDelta> decodeFleetDelta(const QByteArray &bytes)
{
    QDataStream in(bytes);
    quint32 magic = 0;
    quint8 version = 0, kind = 0;
    FleetDelta delta;
    prepared(in) >> magic >> version >> kind >> delta.origin;
    if (in.status() != QDataStream::Ok || magic != kMagic || version != kVersion)
        return std::nullopt;
    delta.kind = static_cast<FleetDelta::Kind>(kind);
    if (delta.kind == FleetDelta::Kind::Cars) {
        quint32 count = 0;
        in >> count;
        if (in.status() != QDataStream::Ok || count > kMaxCarsPerDelta || qsizetype(count) * kCarBytes > bytes.size())
            return std::nullopt;
        delta.cars.resize(count);
        for (CarSnapshot &c : delta.cars)
            if (!readCar(in, c))
                return std::nullopt;
        if (in.atEnd())
            return delta; // from a node that does not send device cars
        quint32 devices = 0;
        in >> devices;
        if (in.status() != QDataStream::Ok || devices > count)
            return std::nullopt;
        delta.deviceCars.resize(devices);
        for (int &id : delta.deviceCars) {
            qint32 car = 0;
            in >> car;
            id = car;
        }
        if (in.status() != QDataStream::Ok)
            return std::nullopt;
        if (in.atEnd())
            return delta; // from a node that does not send road places
        in >> delta.placesKey;
        if (delta.placesKey != 0)
            for (CarSnapshot &c : delta.cars)
                if (!readRoadPlace(in, c.road))
                    return std::nullopt;
        if (in.status() != QDataStream::Ok)
            return std::nullopt;
        return delta;
    }
    if (delta.kind == FleetDelta::Kind::Booking && readBooking(in, delta.booking) && readPrice(in, delta.price)) {
        in >> delta.bookingAgeMs >> delta.bookingOnBoardMs;
        if (in.status() != QDataStream::Ok)
            return std::nullopt;
        if (delta.bookingAgeMs < 0 || delta.bookingAgeMs > kMaxAgeMs)
            delta.bookingAgeMs = kUnknownAge;
        if (delta.bookingOnBoardMs < 0 || delta.bookingOnBoardMs > kMaxAgeMs || delta.booking.pickupMs == 0)
            delta.bookingOnBoardMs = kUnknownAge;
        return delta;
    }
    if (delta.kind == FleetDelta::Kind::Claim || delta.kind == FleetDelta::Kind::Unclaim) {
        quint64 booking = 0;
        qint32 car = 0;
        in >> booking >> car;
        if (in.status() != QDataStream::Ok || car <= 0)
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
    QDataStream out(&bytes, QIODevice::WriteOnly);
    prepared(out) << kMagic << kVersion << quint8(FleetDelta::Kind::Batch) << origin << quint32(deltas.size());
    for (const QByteArray &delta : deltas) {
        out << quint32(delta.size());
        out.writeRawData(delta.constData(), int(delta.size()));
    }
    return bytes;
}

std::optional<std::vector<FleetDelta>> decodeFleetMessage(const QByteArray &bytes)
{
    QDataStream in(bytes);
    quint32 magic = 0, count = 0;
    quint8 version = 0, kind = 0;
    quint64 origin = 0;
    prepared(in) >> magic >> version >> kind >> origin;
    if (in.status() != QDataStream::Ok || magic != kMagic || version != kVersion)
        return std::nullopt;
    std::vector<FleetDelta> deltas;
    if (kind != quint8(FleetDelta::Kind::Batch)) {
        auto one = decodeFleetDelta(bytes);
        if (!one)
            return std::nullopt;
        deltas.push_back(std::move(*one));
        return deltas;
    }
    in >> count;
    if (in.status() != QDataStream::Ok || count == 0 || count > kMaxDeltasPerMessage)
        return std::nullopt;
    deltas.reserve(count);
    for (quint32 i = 0; i < count; ++i) {
        quint32 size = 0;
        in >> size;
        const qsizetype at = qsizetype(in.device()->pos());
        if (in.status() != QDataStream::Ok || qsizetype(size) > bytes.size() - at)
            return std::nullopt;
        // A view, not a copy: `bytes` outlives it. A Batch inside is refused there.
        auto part = decodeFleetDelta(QByteArray::fromRawData(bytes.constData() + at, qsizetype(size)));
        if (!part || part->origin != origin)
            return std::nullopt;
        deltas.push_back(std::move(*part));
        in.skipRawData(int(size));
    }
    if (!in.atEnd())
        return std::nullopt;
    return deltas;
}

QByteArray encodeCar(const CarSnapshot &car)
{
    QByteArray bytes;
    QDataStream out(&bytes, QIODevice::WriteOnly);
    writeCar(prepared(out), car);
    return bytes;
}

std::optional<CarSnapshot> decodeCar(const QByteArray &bytes)
{
    QDataStream in(bytes);
    CarSnapshot car;
    if (!readCar(prepared(in), car))
        return std::nullopt;
    return car;
}

} // namespace taxicore
