#pragma once

#include "fleet/FleetTypes.h"
#include "pricing/Tariff.h"

#include <QByteArray>
#include <QJsonObject>

#include <vector>

namespace taxicore {

// The JSON shapes of API v1, in one place so every endpoint answers alike.
QJsonObject pointJson(LatLng p);
QJsonObject carJson(const CarSnapshot &car);
QJsonObject fareJson(const FareBreakdown &fare, const Tariff &tariff);
QJsonObject bookingJson(const BookingSnapshot &booking);

// GET /api/v1/cars/nearby's body, {"cars":[carJson + distance_m + eta_s, ...]}, written straight
// into bytes: exactly what QJsonDocument(...).toJson(Compact) gives for it (keys in QJsonObject's
// sorted order, numbers as Qt writes them), because building and serialising QJsonObjects was over
// half of a nearby request's CPU (docs/benchmarks.md). `etas[i]` is car i's ETA (non-finite: null).
QByteArray nearbyJson(const std::vector<NearbyCar> &found, const std::vector<double> &etas);
// Its cars array alone, [...]: what the live feed's updates carry (http/LiveFeed), written alike.
QByteArray nearbyCarsJson(const std::vector<NearbyCar> &found, const std::vector<double> &etas);

} // namespace taxicore
