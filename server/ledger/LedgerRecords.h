#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QString>
#include <optional>
#include <variant>

namespace taxicore {

struct LedgerPoint {
    double lat = 0;
    double lng = 0;
};

// A new booking (its first state, usually "assigned"). Times are ms since the epoch, UTC.
// Read back by openBookings(), where atMs is the time of its last transition.
struct BookingRecord {
    quint64 bookingId = 0;
    QString state = QStringLiteral("assigned");
    int carId = 0;
    QString riderId;
    LedgerPoint pickup;
    std::optional<LedgerPoint> dropoff;
    qint64 createdMs = 0;
    qint64 atMs = 0;
    QByteArray riderTokenHash; // empty: no owner (schema 3)
};

// A booking moved to `state` (arriving, on_trip, cancelled, ...); may set a late dropoff.
struct TransitionRecord {
    quint64 bookingId = 0;
    QString state;
    int carId = 0;
    qint64 atMs = 0;
    std::optional<LedgerPoint> dropoff;
};

// fleet's FareBreakdown plus the tariff's currency.
struct LedgerFare {
    double base = 0;
    double distanceCharge = 0;
    double timeCharge = 0;
    double minimum = 0;
    double surge = 1.0;
    double total = 0;
    QString currency = QStringLiteral("SEK");
};

// A completed trip. Appending it also records the booking's "completed" transition at endedMs.
struct TripRecord {
    quint64 bookingId = 0;
    int carId = 0;
    QString riderId;
    qint64 startedMs = 0;
    qint64 endedMs = 0;
    double distanceM = 0;
    double durationS = 0;
    LedgerFare fare;
};

// An operational event: kind is e.g. mode_switch, worker_crash, worker_respawn, benchmark_run.
struct EventRecord {
    QString kind;
    QJsonObject detail;
    qint64 atMs = 0;
};

using LedgerRecord = std::variant<BookingRecord, TransitionRecord, TripRecord, EventRecord>;

} // namespace taxicore
