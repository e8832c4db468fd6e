#pragma once

#include "city/Geo.h"
#include "wire/HttpTypes.h"

#include <QJsonObject>
#include <optional>

namespace taxicore {

// Thrown by the readers below; the HTTP layer answers with its response (400, 404, 409, ...).
struct ApiException {
    ApiResponse response;
};

[[noreturn]] void throwApiError(int status, const char *code, const QString &message, const QJsonObject &extra = {});

// The JSON object in a request body, or 400 naming what is wrong with it.
QJsonObject readJsonObject(const ApiRequest &request);

// A finite number in [min, max]: from a query parameter (absent → fallback, or 400 if none).
double queryNumber(const ApiRequest &request, const char *name, double min, double max,
                   std::optional<double> fallback = std::nullopt);
// The same for a field of a JSON object; `where` names the object in messages ("pickup").
double jsonNumber(const QJsonObject &object, const char *name, double min, double max,
                  std::optional<double> fallback = std::nullopt, const char *where = nullptr);
// {"lat","lng"} inside the service area.
LatLng jsonPoint(const QJsonObject &object, const char *where);
// lat/lng query parameters with the given prefix ("from_" → from_lat, from_lng).
LatLng queryPoint(const ApiRequest &request, const char *prefix);
// The n-th {id} of the route as a positive integer, or 400.
uint64_t pathId(const ApiRequest &request, int index, const char *what);

// PUT /api/v1/cars/{id}/position: a car device's report, checked (400 naming the bad field).
struct PositionReport {
    LatLng position;
    double heading = 0;
    double speedKmh = 0;
};
PositionReport readPositionReport(const QJsonObject &body);

// POST /api/v1/bookings: who books, where from and (optionally) where to, checked.
struct BookingOrder {
    QString riderId;
    LatLng pickup;
    std::optional<LatLng> dropoff;
};
BookingOrder readBookingOrder(const QJsonObject &body);

// The area cars drive in and riders are served: central Gothenburg with a margin.
struct ServiceArea {
    double south = 57.60, north = 57.80, west = 11.80, east = 12.15;
    bool contains(LatLng p) const { return p.lat >= south && p.lat <= north && p.lng >= west && p.lng <= east; }
};
const ServiceArea &serviceArea();

} // namespace taxicore
