#pragma once

// Helpers of the issue-9 hardening tests: requests with or without a bearer token, each on its
// own connection (in processes mode any worker may serve it), bookings (waiting: Wait.h).
// Include after <QTest>.

#include "ApiAssert.h"
#include "HttpClient.h"
#include "RiderToken.h"
#include "ServerProcess.h"
#include "Wait.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTest>

namespace taxicore::test::hardening {

// A token for --admin-token (the server accepts 16–128 of [A-Za-z0-9._~+/=-]).
inline const QByteArray kAdminToken = QByteArrayLiteral("hardening-test-admin-token-0123456789");

// `token` empty: no Authorization header at all.
inline HttpResponse send(const ServerProcess &server, const QByteArray &method, const QByteArray &path,
                         const QByteArray &token = {}, const QByteArray &body = {})
{
    HttpClient http(server.host(), server.port(), 10'000);
    return http.request(method, path, body, token.isEmpty() ? Headers{} : bearer(token));
}

inline HttpResponse book(const ServerProcess &server, const QString &rider, double lat = 57.70, double lng = 11.97,
                         const QByteArray &token = {})
{
    const QJsonObject body{{"rider_id", rider}, {"pickup", QJsonObject{{"lat", lat}, {"lng", lng}}}};
    return send(server, "POST", "/api/v1/bookings", token, QJsonDocument(body).toJson(QJsonDocument::Compact));
}

inline qint64 bookingId(const HttpResponse &booked)
{
    return qint64(booked.json().value(QStringLiteral("booking_id")).toDouble());
}

inline QByteArray movePath(qint64 id, const QByteArray &action)
{
    return "/api/v1/bookings/" + QByteArray::number(id) + "/" + action;
}

// Workers in state "serving" with a pid, as /admin/v1/workers lists them (asked with `token`).
inline int servingWorkers(const ServerProcess &server, const QByteArray &token)
{
    int n = 0;
    const HttpResponse r = send(server, "GET", "/admin/v1/workers", token);
    for (const QJsonValue &v : r.json().value(QStringLiteral("workers")).toArray())
        n += v.toObject().value(QStringLiteral("state")).toString() == QStringLiteral("serving")
             && v.toObject().value(QStringLiteral("pid")).toDouble() > 0;
    return n;
}

} // namespace taxicore::test::hardening
