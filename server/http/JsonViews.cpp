#include "http/JsonViews.h"

#include <QJsonValue>
#include <QLocale>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace taxicore {

namespace {
double round6(double v)
{
    return std::round(v * 1e6) / 1e6;
}
double round1(double v)
{
    return std::round(v * 10) / 10;
}

// Writes nearby's body into a buffer sized for it beforehand: QByteArray::append's checks and
// std::to_chars' shortest-form search cost more than the whole rest of the answer.
class BodyWriter {
public:
    // The most one car can take: its keys (~110 bytes) and nine values of at most 32 each.
    static constexpr qsizetype kMaxBytesPerCar = 448;

    explicit BodyWriter(char *at)
        : m_at(at)
    {
    }
    char *end() const { return m_at; }

    template <std::size_t N> void literal(const char (&text)[N])
    {
        std::memcpy(m_at, text, N - 1);
        m_at += N - 1;
    }
    void text(QLatin1StringView text)
    {
        std::memcpy(m_at, text.data(), std::size_t(text.size()));
        m_at += text.size();
    }
    void integer(int64_t v) { m_at = std::to_chars(m_at, m_at + 24, v).ptr; }

    // A double as QJsonDocument writes it: an integral value within ±2^53 as an integer, any
    // other finite one in the shortest form that reads back exactly (below 2^53 std::to_chars'
    // plain form is what Qt's 'g' with FloatingPointShortest gives, "1e-05" style exponents
    // alike), a non-finite one as null. server_nearby_json_test holds the writers together.
    void number(double v)
    {
        constexpr double kLargestExactInteger = 9007199254740992.0; // 2^53
        if (!std::isfinite(v)) {
            literal("null");
        } else if (std::abs(v) > kLargestExactInteger) {
            // Where the fixed form wins, Qt pads the shortest digits with zeros and to_chars writes
            // the exact integer: Qt's own call for these (no position, speed or ETA is this large).
            const QByteArray qt = QByteArray::number(v, 'g', QLocale::FloatingPointShortest);
            std::memcpy(m_at, qt.constData(), std::size_t(qt.size()));
            m_at += qt.size();
        } else if (v == std::trunc(v)) {
            integer(int64_t(v));
        } else {
            m_at = std::to_chars(m_at, m_at + 32, v).ptr;
        }
    }

    // std::round(v * 10^decimals) / 10^decimals, written as number() writes it, but straight from
    // the rounded integer where that gives the same text: a value of at most `decimals` (≤ 6)
    // fractional digits, from 0.001 up to 10^9, reads back from those digits alone (doubles there
    // are far closer together than 10^-6, so no shorter decimal reads back as it), and in that
    // range Qt writes it in fixed form. The rest (tiny, huge, non-finite) goes through number().
    void rounded(double v, int decimals)
    {
        static constexpr double kScale[] = {1, 10, 100, 1e3, 1e4, 1e5, 1e6};
        constexpr double kFixedFrom = 0.001, kFixedBelow = 1e9;
        const double scaled = std::round(v * kScale[decimals]);
        const double value = scaled / kScale[decimals];
        if (!(std::abs(value) < kFixedBelow) || (std::abs(value) < kFixedFrom && value != 0)) {
            number(value);
            return;
        }
        int64_t units = int64_t(scaled);
        if (units < 0) {
            *m_at++ = '-';
            units = -units;
        }
        const auto scale = int64_t(kScale[decimals]);
        integer(units / scale);
        int64_t fraction = units % scale;
        if (fraction == 0)
            return;
        int digits = decimals;
        while (fraction % 10 == 0) { // trailing zeros are not written
            fraction /= 10;
            --digits;
        }
        *m_at++ = '.';
        for (int i = digits - 1; i >= 0; --i) {
            m_at[i] = char('0' + fraction % 10);
            fraction /= 10;
        }
        m_at += digits;
    }

private:
    char *m_at;
};
} // namespace

QJsonObject pointJson(LatLng p)
{
    return {{QStringLiteral("lat"), round6(p.lat)}, {QStringLiteral("lng"), round6(p.lng)}};
}

QJsonObject carJson(const CarSnapshot &car)
{
    return {
        {QStringLiteral("id"), car.id},
        {QStringLiteral("lat"), round6(car.position.lat)},
        {QStringLiteral("lng"), round6(car.position.lng)},
        {QStringLiteral("heading"), round1(car.heading)},
        {QStringLiteral("speed_kmh"), round1(car.speedKmh)},
        {QStringLiteral("state"), QString(carStateName(car.state))},
        {QStringLiteral("booking_id"), car.bookingId ? QJsonValue(qint64(car.bookingId)) : QJsonValue()},
        {QStringLiteral("updated_ms"), qint64(car.updatedMs)},
    };
}

QJsonObject fareJson(const FareBreakdown &fare, const Tariff &tariff)
{
    return {
        {QStringLiteral("total"), fare.total},
        {QStringLiteral("currency"), tariff.currency},
        {QStringLiteral("base"), fare.base},
        {QStringLiteral("per_km"), tariff.perKm},
        {QStringLiteral("per_minute"), tariff.perMinute},
        {QStringLiteral("distance_charge"), fare.distanceCharge},
        {QStringLiteral("time_charge"), fare.timeCharge},
        {QStringLiteral("minimum"), fare.minimum},
        {QStringLiteral("surge"), fare.surge},
    };
}

QJsonObject bookingJson(const BookingSnapshot &b)
{
    QJsonObject o{
        {QStringLiteral("booking_id"), qint64(b.id)},
        {QStringLiteral("state"), QString(bookingStateName(b.state))},
        {QStringLiteral("rider_id"), b.riderId},
        {QStringLiteral("car_id"), b.carId},
        {QStringLiteral("pickup"), pointJson(b.pickup)},
        {QStringLiteral("eta_s"), qint64(b.etaS)},
        {QStringLiteral("created_ms"), qint64(b.createdMs)},
    };
    if (b.hasDropoff)
        o.insert(QStringLiteral("dropoff"), pointJson(b.dropoff));
    if (b.arrivedMs)
        o.insert(QStringLiteral("arrived_ms"), qint64(b.arrivedMs));
    if (b.pickupMs)
        o.insert(QStringLiteral("pickup_ms"), qint64(b.pickupMs));
    if (b.endedMs)
        o.insert(QStringLiteral("ended_ms"), qint64(b.endedMs));
    return o;
}

namespace {
// Nearby's cars array, [carJson + distance_m + eta_s, ...], into a buffer with room for it.
void writeNearbyCars(BodyWriter &w, const std::vector<NearbyCar> &found, const std::vector<double> &etas)
{
    w.literal("[");
    for (std::size_t i = 0; i < found.size(); ++i) {
        const CarSnapshot &car = found[i].car;
        if (i > 0)
            w.literal(",");
        // carJson's keys and distance_m, eta_s, in QJsonObject's (sorted) order.
        w.literal("{\"booking_id\":");
        if (car.bookingId)
            w.integer(int64_t(car.bookingId));
        else
            w.literal("null");
        w.literal(",\"distance_m\":");
        w.rounded(found[i].distanceM, 1);
        w.literal(",\"eta_s\":");
        if (i < etas.size() && std::isfinite(etas[i]))
            w.rounded(etas[i], 0);
        else
            w.literal("null");
        w.literal(",\"heading\":");
        w.rounded(car.heading, 1);
        w.literal(",\"id\":");
        w.integer(car.id);
        w.literal(",\"lat\":");
        w.rounded(car.position.lat, 6);
        w.literal(",\"lng\":");
        w.rounded(car.position.lng, 6);
        w.literal(",\"speed_kmh\":");
        w.rounded(car.speedKmh, 1);
        w.literal(",\"state\":\"");
        w.text(carStateName(car.state)); // plain ASCII names: nothing to escape
        w.literal("\",\"updated_ms\":");
        w.integer(car.updatedMs);
        w.literal("}");
    }
    w.literal("]");
}

// A buffer for `cars` cars and `extra` bytes around them; `write` fills it, the rest is cut.
template <typename Write> QByteArray writtenBody(std::size_t cars, qsizetype extra, Write write)
{
    QByteArray out(extra + 2 + qsizetype(cars) * BodyWriter::kMaxBytesPerCar, Qt::Uninitialized);
    BodyWriter w(out.data());
    write(w);
    out.truncate(w.end() - out.constData());
    return out;
}
} // namespace

QByteArray nearbyJson(const std::vector<NearbyCar> &found, const std::vector<double> &etas)
{
    return writtenBody(found.size(), 16, [&](BodyWriter &w) {
        w.literal("{\"cars\":");
        writeNearbyCars(w, found, etas);
        w.literal("}");
    });
}

QByteArray nearbyCarsJson(const std::vector<NearbyCar> &found, const std::vector<double> &etas)
{
    return writtenBody(found.size(), 0, [&](BodyWriter &w) { writeNearbyCars(w, found, etas); });
}

} // namespace taxicore
