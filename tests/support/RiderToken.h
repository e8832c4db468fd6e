#pragma once

// Booking ownership (issue 9): reading a booking, pickup, complete and cancel need the booking's
// rider token (or the admin token).

#include "HttpClient.h"

#include <QJsonObject>

namespace taxicore::test {

// `Authorization: Bearer <token>` as an extra header for HttpClient::request.
inline Headers bearer(const QByteArray &token)
{
    return {{QByteArrayLiteral("Authorization"), QByteArrayLiteral("Bearer ") + token}};
}

// The rider token of a booking answer (POST /api/v1/bookings → 201).
inline QByteArray riderToken(const QJsonObject &booking)
{
    return booking.value(QStringLiteral("rider_token")).toString().toLatin1();
}

// GET /api/v1/bookings/{id} as the rider holding `token`.
inline HttpResponse readBooking(HttpClient &http, qint64 id, const QByteArray &token)
{
    return http.request("GET", "/api/v1/bookings/" + QByteArray::number(id), {}, bearer(token));
}

// POST /api/v1/bookings/{id}/{action} as the rider holding `token`.
inline HttpResponse moveBooking(HttpClient &http, qint64 id, const QByteArray &action, const QByteArray &token)
{
    return http.request("POST", "/api/v1/bookings/" + QByteArray::number(id) + "/" + action, {}, bearer(token));
}

} // namespace taxicore::test
