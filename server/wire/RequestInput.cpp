#include "wire/RequestInput.h"

#include "region/RegionLayout.h"
#include "wire/ApiError.h"

#include <QJsonDocument>
#include <QJsonParseError>
#include <algorithm>
#include <cmath>

namespace taxicore {

void throwApiError(int status, const char *code, const QString &message, const QJsonObject &extra)
{
    throw ApiException{errorResponse(status, code, message, extra)};
}

const ServiceArea &serviceArea()
{
    static const ServiceArea area;
    return area;
}

QJsonObject readJsonObject(const ApiRequest &request)
{
    if (request.body.isEmpty())
        throwApiError(400, "missing_body", QStringLiteral("this request needs a JSON object body"));
    QJsonParseError parseError;
    const QJsonDocument doc = QJsonDocument::fromJson(request.body, &parseError);
    if (parseError.error != QJsonParseError::NoError)
        throwApiError(400, "malformed_json",
                      QStringLiteral("the body is not valid JSON: %1 at offset %2")
                          .arg(parseError.errorString())
                          .arg(parseError.offset));
    if (!doc.isObject())
        throwApiError(400, "malformed_json", QStringLiteral("the body must be a JSON object"));
    return doc.object();
}

namespace {

QString fieldName(const char *name, const char *where)
{
    return where ? QStringLiteral("%1.%2").arg(QLatin1StringView(where), QLatin1StringView(name))
                 : QString::fromLatin1(name);
}

double checkRange(double value, const QString &name, double min, double max)
{
    if (!std::isfinite(value) || value < min || value > max)
        throwApiError(400, "out_of_range", QStringLiteral("%1 must be between %2 and %3").arg(name).arg(min).arg(max),
                      {{QStringLiteral("field"), name}});
    return value;
}

} // namespace

double queryNumber(const ApiRequest &request, const char *name, double min, double max, std::optional<double> fallback)
{
    const QString key = QString::fromLatin1(name);
    if (!request.query.hasQueryItem(key)) {
        if (fallback)
            return *fallback;
        throwApiError(400, "missing_parameter", QStringLiteral("query parameter %1 is required").arg(key),
                      {{QStringLiteral("field"), key}});
    }
    bool ok = false;
    const double value = request.query.queryItemValue(key).toDouble(&ok);
    if (!ok)
        throwApiError(400, "not_a_number", QStringLiteral("query parameter %1 must be a number").arg(key),
                      {{QStringLiteral("field"), key}});
    return checkRange(value, key, min, max);
}

double jsonNumber(const QJsonObject &object, const char *name, double min, double max, std::optional<double> fallback,
                  const char *where)
{
    const QString key = QString::fromLatin1(name);
    const QString label = fieldName(name, where);
    const auto it = object.constFind(key);
    if (it == object.constEnd() || it->isNull()) {
        if (fallback)
            return *fallback;
        throwApiError(400, "missing_field", QStringLiteral("field %1 is required").arg(label),
                      {{QStringLiteral("field"), label}});
    }
    if (!it->isDouble())
        throwApiError(400, "not_a_number", QStringLiteral("field %1 must be a number").arg(label),
                      {{QStringLiteral("field"), label}});
    return checkRange(it->toDouble(), label, min, max);
}

LatLng jsonPoint(const QJsonObject &object, const char *where)
{
    const QString key = QString::fromLatin1(where);
    const auto it = object.constFind(key);
    if (it == object.constEnd() || it->isNull())
        throwApiError(400, "missing_field", QStringLiteral("field %1 is required").arg(key),
                      {{QStringLiteral("field"), key}});
    if (!it->isObject())
        throwApiError(400, "not_an_object", QStringLiteral("field %1 must be an object {\"lat\",\"lng\"}").arg(key),
                      {{QStringLiteral("field"), key}});
    const QJsonObject point = it->toObject();
    const LatLng p{jsonNumber(point, "lat", -90, 90, std::nullopt, where),
                   jsonNumber(point, "lng", -180, 180, std::nullopt, where)};
    if (!serviceArea().contains(p))
        throwApiError(400, "outside_service_area",
                      QStringLiteral("%1 (%2, %3) is outside the service area").arg(key).arg(p.lat).arg(p.lng),
                      {{QStringLiteral("field"), key}});
    return p;
}

LatLng queryPoint(const ApiRequest &request, const char *prefix)
{
    const QByteArray latName = QByteArray(prefix) + "lat";
    const QByteArray lngName = QByteArray(prefix) + "lng";
    const LatLng p{queryNumber(request, latName.constData(), -90, 90),
                   queryNumber(request, lngName.constData(), -180, 180)};
    if (!serviceArea().contains(p))
        throwApiError(400, "outside_service_area",
                      QStringLiteral("(%1, %2) is outside the service area").arg(p.lat).arg(p.lng));
    return p;
}

uint64_t pathId(const ApiRequest &request, int index, const char *what)
{
    // Decimal digits and nothing else, no leading zero: toULongLong alone also takes a sign, blanks
    // around the number and stops at a NUL, so "/bookings/1%00" and "/bookings/%201" named booking 1.
    const QByteArray text = index < request.params.size() ? request.params[index] : QByteArray();
    const bool digitsOnly = !text.isEmpty() && text.front() != '0'
                            && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
    bool ok = false;
    const qulonglong id = digitsOnly ? text.toULongLong(&ok) : 0;
    if (!ok || id == 0)
        throwApiError(400, "invalid_id",
                      QStringLiteral("%1 id must be a positive integer").arg(QLatin1StringView(what)));
    return id;
}

PositionReport readPositionReport(const QJsonObject &body)
{
    constexpr double kMaxSpeedKmh = 250;
    const LatLng p{jsonNumber(body, "lat", -90, 90), jsonNumber(body, "lng", -180, 180)};
    if (!serviceArea().contains(p))
        throwApiError(400, "outside_service_area",
                      QStringLiteral("(%1, %2) is outside the service area").arg(p.lat).arg(p.lng));
    return {p, jsonNumber(body, "heading", 0, 360, 0.0), jsonNumber(body, "speed_kmh", 0, kMaxSpeedKmh, 0.0)};
}

BookingOrder readBookingOrder(const QJsonObject &body)
{
    const QJsonValue rider = body.value(QStringLiteral("rider_id"));
    const auto hasControl = [](const QString &text) {
        return std::any_of(text.begin(), text.end(), [](QChar c) { return c.unicode() < 0x20 || c.unicode() == 0x7f; });
    };
    // The rider id is stored in a fixed-size slot of the shared region (with its NUL).
    if (!rider.isString() || rider.toString().isEmpty() || rider.toString().toUtf8().size() >= kRiderIdBytes
        || hasControl(rider.toString()))
        throwApiError(
            400, "invalid_rider_id",
            QStringLiteral("rider_id must be a non-empty string of at most %1 bytes without control characters")
                .arg(kRiderIdBytes - 1),
            {{QStringLiteral("field"), QStringLiteral("rider_id")}});
    BookingOrder order{rider.toString(), jsonPoint(body, "pickup"), std::nullopt};
    if (body.contains(QStringLiteral("dropoff")) && !body.value(QStringLiteral("dropoff")).isNull())
        order.dropoff = jsonPoint(body, "dropoff");
    return order;
}

} // namespace taxicore
