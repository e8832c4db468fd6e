#pragma once

#include "fleet/FleetTypes.h"
#include "pricing/Tariff.h"

#include <QJsonObject>

namespace taxicore {

// The JSON shapes of API v1, in one place so every endpoint answers alike.
QJsonObject pointJson(LatLng p);
QJsonObject carJson(const CarSnapshot &car);
QJsonObject fareJson(const FareBreakdown &fare, const Tariff &tariff);
QJsonObject bookingJson(const BookingSnapshot &booking);

} // namespace taxicore
