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

// The quote a booking with a drop-off was answered (schema 4): the fare it is charged.
struct LedgerQuote {
    LedgerFare fare;
    double distanceM = 0;
    double durationS = 0;
};

// Where an open booking's ride stands (schema 4), checkpointed while its car drives: the car's
// position, where the car heads on the trip, and the metres and simulated seconds on board. And
// (SQLite schema 6, PostgreSQL 12) the simulated seconds since the booking was made, measured on
// the monotonic clock: a waiting booking's age at a restart, where the wall clock may have
// stepped since it was made. atMs is the checkpoint's wall-clock time.
struct LedgerProgress {
    LedgerPoint carAt;
    std::optional<LedgerPoint> destination;
    double tripDistanceM = 0;
    double tripElapsedS = 0;
    qint64 atMs = 0;
    std::optional<double> waitedS = std::nullopt; // none: a checkpoint from before the column
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
    // The rider token was derived from an Idempotency-Key: the ledger claims its hash for this
    // booking alone and refuses the record (kLedgerBookingKeyTaken) when another booking holds it.
    bool keyed = false;
    std::optional<double> surge;            // captured at booking (schema 4); none: 1
    std::optional<LedgerQuote> quote;       // with a drop-off (schema 4)
    std::optional<LedgerProgress> progress; // read back only: the last checkpoint
};

// A checkpoint of an open booking's progress; applies only while the booking is open and to a
// newer checkpoint than the one stored. No transition row: it is not a move.
struct ProgressRecord {
    quint64 bookingId = 0;
    LedgerProgress progress;
};

// A booking moved to `state` (arriving, on_trip, cancelled, ...); may set a late dropoff.
struct TransitionRecord {
    quint64 bookingId = 0;
    QString state;
    int carId = 0;
    qint64 atMs = 0;
    std::optional<LedgerPoint> dropoff;
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

// A booking as the ledger has it now (GET of a booking that ended before a restart): its row,
// when it last moved, and its trip when completed.
struct StoredBooking {
    BookingRecord booking; // atMs: the time of its latest state
    std::optional<TripRecord> trip;
};

using LedgerRecord = std::variant<BookingRecord, TransitionRecord, TripRecord, EventRecord, ProgressRecord>;

} // namespace taxicore
