#include "http/JsonViews.h"

#include <QJsonValue>
#include <cmath>

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

} // namespace taxicore
