#pragma once

// POST /api/v1/bookings with an Idempotency-Key (a rider retrying a booking whose 201 was lost):
// the keyed request, the free cars a booking would take, and what a burst of one keyed request
// was answered. Shared by the SQLite and PostgreSQL idempotency tests. Include after <QTest>.

#include "HttpClient.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QStringList>
#include <QUuid>

namespace taxicore::test {

inline const QByteArray kIdempotencyKeyHeader = QByteArrayLiteral("Idempotency-Key");
inline const QByteArray kReplayedHeader = QByteArrayLiteral("Idempotent-Replayed");

// What a client would send: a UUID (36 visible ASCII characters), new for every booking.
inline QByteArray freshIdempotencyKey()
{
    return QUuid::createUuid().toByteArray(QUuid::WithoutBraces);
}

// The body as bytes, once: a retry sends exactly the bytes of the first attempt, so "the same
// body" never depends on how the server compares JSON.
inline QByteArray bookingBody(const QJsonObject &body)
{
    return QJsonDocument(body).toJson(QJsonDocument::Compact);
}

// POST /api/v1/bookings with `headers` as given (several keys, odd names: the malformed cases).
inline HttpResponse postBooking(HttpClient &http, const QByteArray &body, const Headers &headers)
{
    return http.request("POST", "/api/v1/bookings", body, headers);
}

inline HttpResponse bookWithKey(HttpClient &http, const QByteArray &body, const QByteArray &key)
{
    return postBooking(http, body, {{kIdempotencyKeyHeader, key}});
}

inline qint64 bookingIdOf(const HttpResponse &r)
{
    return qint64(r.json().value(QStringLiteral("booking_id")).toDouble());
}

// Cars nearby reports as available anywhere in the city: a booking takes one, a cancel gives it
// back, a replayed answer must leave it alone. (The servers run with --sim-speed 0.001, so cars do
// not change state by themselves.)
inline int availableCars(HttpClient &http)
{
    const HttpResponse r = http.get("/api/v1/cars/nearby?lat=57.7&lng=11.97&radius_m=50000&limit=1000");
    if (!r.complete || r.status != 200)
        return -1;
    int n = 0;
    for (const QJsonValue &v : r.json().value(QStringLiteral("cars")).toArray())
        n += v.toObject().value(QStringLiteral("state")).toString() == QStringLiteral("available");
    return n;
}

// The answers to one keyed booking sent many times at once.
struct KeyedBurst {
    int created = 0;  // 201 without Idempotent-Replayed: the one attempt that booked
    int replayed = 0; // 201 with Idempotent-Replayed: true
    QSet<qint64> bookingIds;
    QSet<QByteArray> riderTokens;
    QStringList unexpected; // anything else (409, 5xx, no answer), described

    QByteArray describe() const
    {
        return QStringLiteral("%1 created, %2 replayed, booking ids {%3}, %4 unexpected%5")
            .arg(created)
            .arg(replayed)
            .arg([this] {
                QStringList ids;
                for (qint64 id : bookingIds)
                    ids.append(QString::number(id));
                return ids.join(QLatin1Char(','));
            }())
            .arg(unexpected.size())
            .arg(unexpected.isEmpty() ? QString() : QStringLiteral(", first: ") + unexpected.first())
            .toUtf8();
    }
};

inline KeyedBurst summarizeBurst(const QList<HttpResponse> &answers)
{
    KeyedBurst burst;
    for (const HttpResponse &r : answers) {
        if (!r.complete || r.status != 201) {
            burst.unexpected.append(QString::fromUtf8(r.describe()));
            continue;
        }
        const QByteArray replayed = r.header(kReplayedHeader);
        if (replayed.isNull())
            ++burst.created;
        else if (replayed == "true")
            ++burst.replayed;
        else
            burst.unexpected.append(QStringLiteral("Idempotent-Replayed: ") + QString::fromLatin1(replayed));
        burst.bookingIds.insert(bookingIdOf(r));
        burst.riderTokens.insert(r.json().value(QStringLiteral("rider_token")).toString().toLatin1());
    }
    return burst;
}

} // namespace taxicore::test
