#include "ledger/LedgerRecordWriter.h"

#include "ledger/LedgerConnection.h"
#include "ledger/LedgerErrors.h"
#include "ledger/LedgerStates.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QSqlError>

namespace taxicore {

namespace {

// The booking row takes the new state only when it is further along the state machine. Only ever
// over the same booking: one under an id that holds another booking was refused before
// (kAnotherBooking), so an id handed out twice never lets the second booking replace the first,
// acknowledged one. The row a move of the booking made first is filled in.
const auto kUpsertBooking =
    QStringLiteral("INSERT INTO bookings (id, rider_id, car_id, pickup_lat, pickup_lng, dropoff_lat, dropoff_lng,"
                   " state, state_rank, created_ms, updated_ms, rider_token_hash, surge, quote_total, quote_base,"
                   " quote_distance, quote_time, quote_minimum, quote_distance_m, quote_duration_s)"
                   " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
                   " ON CONFLICT(id) DO UPDATE SET rider_id = excluded.rider_id,"
                   " rider_token_hash = excluded.rider_token_hash, surge = excluded.surge,"
                   " quote_total = excluded.quote_total, quote_base = excluded.quote_base,"
                   " quote_distance = excluded.quote_distance, quote_time = excluded.quote_time,"
                   " quote_minimum = excluded.quote_minimum, quote_distance_m = excluded.quote_distance_m,"
                   " quote_duration_s = excluded.quote_duration_s,"
                   " pickup_lat = excluded.pickup_lat, pickup_lng = excluded.pickup_lng,"
                   " dropoff_lat = coalesce(excluded.dropoff_lat, dropoff_lat),"
                   " dropoff_lng = coalesce(excluded.dropoff_lng, dropoff_lng),"
                   " car_id = CASE WHEN excluded.state_rank > state_rank THEN excluded.car_id ELSE car_id END,"
                   " state = CASE WHEN excluded.state_rank > state_rank THEN excluded.state ELSE state END,"
                   " updated_ms = CASE WHEN excluded.state_rank > state_rank THEN excluded.updated_ms"
                   "   ELSE updated_ms END,"
                   " state_rank = max(state_rank, excluded.state_rank),"
                   " created_ms = excluded.created_ms");

// Does the id hold another booking? As PostgreSQL decides (TAXICORE_ANOTHER_BOOKING in
// PostgresSchema.cpp): a row with its own creation time, rider or rider token. A row a move made
// first (no created_ms yet) is this booking's. IS NOT: NULL-safe "is distinct from".
const auto kAnotherBooking =
    QStringLiteral("SELECT 1 FROM bookings WHERE id = ? AND created_ms IS NOT NULL"
                   " AND (created_ms IS NOT ? OR rider_id IS NOT ? OR rider_token_hash IS NOT ?)");

// A transition for a booking whose row is not committed yet creates it; the booking fills it in.
// A move applies when it is further along the state machine, except an arrival of a car that is no
// longer the booking's: a reassign committed first (the two are recorded by different threads), and
// applying it would restore the booking with the old car. Decided by the car, not by time: a wall
// clock stepped back between the two must not reorder them.
#define TAXICORE_MOVE_APPLIES                                                                                          \
    "(excluded.state_rank > state_rank AND NOT (excluded.state = 'arriving' AND excluded.car_id <> 0"                  \
    " AND ifnull(car_id <> excluded.car_id, 0)))"
const auto kMoveState =
    QStringLiteral("INSERT INTO bookings (id, car_id, dropoff_lat, dropoff_lng, state, state_rank, updated_ms)"
                   " VALUES (?,?,?,?,?,?,?)"
                   " ON CONFLICT(id) DO UPDATE SET"
                   " dropoff_lat = coalesce(excluded.dropoff_lat, dropoff_lat),"
                   " dropoff_lng = coalesce(excluded.dropoff_lng, dropoff_lng),"
                   " car_id = CASE WHEN " TAXICORE_MOVE_APPLIES " THEN coalesce(nullif(excluded.car_id, 0), car_id)"
                   "   ELSE car_id END,"
                   " state = CASE WHEN " TAXICORE_MOVE_APPLIES " THEN excluded.state ELSE state END,"
                   " updated_ms = CASE WHEN " TAXICORE_MOVE_APPLIES " THEN excluded.updated_ms ELSE updated_ms END,"
                   " state_rank = CASE WHEN " TAXICORE_MOVE_APPLIES " THEN excluded.state_rank ELSE state_rank END");
#undef TAXICORE_MOVE_APPLIES

// Back to "assigned" with another car (an operator's reassign): the booking row takes the new car
// while it is still waiting for one (assigned or arriving), so a restart restores the booking with
// the car it has now. Never judged by time: the fleet lets one move of a booking at a time reach the
// ledger (a reassign is settled before the next move begins, and a car awaiting a reassign marks no
// arrival), and a wall clock stepped back must not make the ledger drop a reassign it acknowledged.
// A row not yet committed is created; the booking's own insert then keeps this car (same rank).
const auto kReassign =
    QStringLiteral("INSERT INTO bookings (id, car_id, state, state_rank, updated_ms) VALUES (?,?,'assigned',1,?)"
                   " ON CONFLICT(id) DO UPDATE SET"
                   " car_id = CASE WHEN state_rank <= 2 THEN excluded.car_id ELSE car_id END,"
                   " state = CASE WHEN state_rank <= 2 THEN 'assigned' ELSE state END,"
                   " state_rank = CASE WHEN state_rank <= 2 THEN 1 ELSE state_rank END,"
                   " updated_ms = CASE WHEN state_rank <= 2 THEN excluded.updated_ms ELSE updated_ms END");

// A checkpoint lands only on an open booking and only when newer than the stored one (the
// simulator's records commit in order, but a restart's first checkpoint may race a late one).
// Newer by the time on board first, then by the booking's age (both monotonic: they grow through
// a wall-clock step), then by the wall clock: judged by the wall clock alone, a step back refused
// every checkpoint of a ride for as long as the step, and a crash then lost the ride's time and
// metres since (hostile review M2).
const auto kProgress =
    QStringLiteral("UPDATE bookings SET car_lat = ?, car_lng = ?, destination_lat = ?, destination_lng = ?,"
                   " trip_distance_m = ?, trip_elapsed_s = ?, waited_s = ?, progress_ms = ?"
                   " WHERE id = ? AND state_rank < 4 AND (ifnull(trip_elapsed_s, -1) < ?"
                   "  OR (ifnull(trip_elapsed_s, -1) = ? AND (ifnull(waited_s, -1) < ?"
                   "   OR (ifnull(waited_s, -1) = ? AND ifnull(progress_ms, 0) <= ?))))");

const auto kInsertTransition =
    QStringLiteral("INSERT INTO transitions (booking_id, state, car_id, at_ms) VALUES (?,?,?,?)");

const auto kInsertTrip =
    QStringLiteral("INSERT OR REPLACE INTO trips (booking_id, car_id, rider_id, started_ms, ended_ms, distance_m,"
                   " duration_s, fare_total, currency, fare_base, fare_distance, fare_time, fare_minimum, "
                   "fare_surge)"
                   " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)");

// An Idempotency-Key's booking (schema 5): read first, inside the writer's transaction, so the
// check and the claim are one step for every process writing the file.
const auto kKeyOwner = QStringLiteral("SELECT booking_id FROM idempotency_keys WHERE token_hash = ?");
const auto kClaimKey = QStringLiteral("INSERT INTO idempotency_keys (token_hash, booking_id) VALUES (?,?)");

const auto kInsertEvent = QStringLiteral("INSERT INTO events (at_ms, kind, detail, pid) VALUES (?,?,?,?)");

QVariant latOf(const std::optional<LedgerPoint> &point)
{
    return point ? QVariant(point->lat) : QVariant();
}

QVariant lngOf(const std::optional<LedgerPoint> &point)
{
    return point ? QVariant(point->lng) : QVariant();
}

QString checkBooking(quint64 id, const QString &state)
{
    if (id == 0 || id > quint64(std::numeric_limits<qint64>::max()))
        return QStringLiteral("ledger: invalid booking id %1").arg(id);
    if (ledgerStateRank(state) < 0)
        return QStringLiteral("ledger: unknown booking state '%1'").arg(state);
    return {};
}

} // namespace

LedgerRecordWriter::LedgerRecordWriter(LedgerConnection &connection)
    : m_connection(connection)
    , m_booking(connection.database())
    , m_state(connection.database())
    , m_transition(connection.database())
    , m_trip(connection.database())
    , m_event(connection.database())
    , m_reassign(connection.database())
    , m_progress(connection.database())
    , m_keyOwner(connection.database())
    , m_claimKey(connection.database())
    , m_anotherBooking(connection.database())
    , m_pid(QCoreApplication::applicationPid())
{
}

QString LedgerRecordWriter::prepare()
{
    const std::pair<QSqlQuery *, QString> statements[] = {
        {&m_booking, kUpsertBooking},       {&m_state, kMoveState},
        {&m_transition, kInsertTransition}, {&m_trip, kInsertTrip},
        {&m_event, kInsertEvent},           {&m_reassign, kReassign},
        {&m_progress, kProgress},           {&m_keyOwner, kKeyOwner},
        {&m_claimKey, kClaimKey},           {&m_anotherBooking, kAnotherBooking},
    };
    for (const auto &[query, sql] : statements) {
        if (!query->prepare(sql))
            return m_connection.describe(query->lastError(), QStringLiteral("preparing statements"));
    }
    return {};
}

QString LedgerRecordWriter::write(const LedgerRecord &record)
{
    return std::visit(
        [this](const auto &r) -> QString {
            using T = std::decay_t<decltype(r)>;
            if constexpr (std::is_same_v<T, BookingRecord>)
                return writeBooking(r);
            else if constexpr (std::is_same_v<T, TransitionRecord>)
                return writeTransition(r);
            else if constexpr (std::is_same_v<T, TripRecord>)
                return writeTrip(r);
            else if constexpr (std::is_same_v<T, ProgressRecord>)
                return writeProgress(r);
            else
                return writeEvent(r);
        },
        record);
}

QString LedgerRecordWriter::writeBooking(const BookingRecord &b)
{
    if (QString error = checkBooking(b.bookingId, b.state); !error.isEmpty())
        return error;
    // Before anything of it is written (its key too): a refusal leaves the batch's others to commit.
    if (QString error = refuseAnotherBooking(b); !error.isEmpty())
        return error;
    if (b.keyed)
        if (QString error = claimKey(b.bookingId, b.riderTokenHash); !error.isEmpty())
            return error;
    const QVariant values[] = {qint64(b.bookingId),
                               b.riderId,
                               b.carId,
                               b.pickup.lat,
                               b.pickup.lng,
                               latOf(b.dropoff),
                               lngOf(b.dropoff),
                               b.state,
                               ledgerStateRank(b.state),
                               b.createdMs,
                               b.atMs,
                               b.riderTokenHash.isEmpty() ? QVariant() : QVariant(b.riderTokenHash),
                               b.surge ? QVariant(*b.surge) : QVariant(),
                               b.quote ? QVariant(b.quote->fare.total) : QVariant(),
                               b.quote ? QVariant(b.quote->fare.base) : QVariant(),
                               b.quote ? QVariant(b.quote->fare.distanceCharge) : QVariant(),
                               b.quote ? QVariant(b.quote->fare.timeCharge) : QVariant(),
                               b.quote ? QVariant(b.quote->fare.minimum) : QVariant(),
                               b.quote ? QVariant(b.quote->distanceM) : QVariant(),
                               b.quote ? QVariant(b.quote->durationS) : QVariant()};
    for (int i = 0; i < int(std::size(values)); ++i)
        m_booking.bindValue(i, values[i]);
    if (QString error = run(m_booking, QStringLiteral("writing a booking")); !error.isEmpty())
        return error;
    m_transition.bindValue(0, qint64(b.bookingId));
    m_transition.bindValue(1, b.state);
    m_transition.bindValue(2, b.carId);
    m_transition.bindValue(3, b.atMs);
    return run(m_transition, QStringLiteral("writing a transition"));
}

QString LedgerRecordWriter::refuseAnotherBooking(const BookingRecord &b)
{
    m_anotherBooking.bindValue(0, qint64(b.bookingId));
    m_anotherBooking.bindValue(1, b.createdMs);
    m_anotherBooking.bindValue(2, b.riderId);
    m_anotherBooking.bindValue(3, b.riderTokenHash.isEmpty() ? QVariant() : QVariant(b.riderTokenHash));
    if (!m_anotherBooking.exec()) {
        const QString error =
            m_connection.describe(m_anotherBooking.lastError(), QStringLiteral("reading a booking's id"));
        m_anotherBooking.finish();
        return error;
    }
    const bool taken = m_anotherBooking.next();
    m_anotherBooking.finish();
    if (!taken)
        return {};
    return QStringLiteral("%1: booking %2 is another booking already")
        .arg(QLatin1StringView(kLedgerBookingIdTaken))
        .arg(b.bookingId);
}

QString LedgerRecordWriter::claimKey(quint64 bookingId, const QByteArray &tokenHash)
{
    m_keyOwner.bindValue(0, tokenHash);
    if (!m_keyOwner.exec()) {
        const QString error =
            m_connection.describe(m_keyOwner.lastError(), QStringLiteral("reading an idempotency key"));
        m_keyOwner.finish();
        return error;
    }
    const bool claimed = m_keyOwner.next();
    const quint64 owner = claimed ? m_keyOwner.value(0).toULongLong() : 0;
    m_keyOwner.finish();
    if (claimed)
        return owner == bookingId ? QString() // the same booking again (a batch replayed record by record)
                                  : QStringLiteral("%1: its Idempotency-Key made booking %2")
                                        .arg(QLatin1StringView(kLedgerBookingKeyTaken))
                                        .arg(owner);
    m_claimKey.bindValue(0, tokenHash);
    m_claimKey.bindValue(1, qint64(bookingId));
    return run(m_claimKey, QStringLiteral("recording an idempotency key"));
}

QString LedgerRecordWriter::writeTransition(const TransitionRecord &t)
{
    if (QString error = checkBooking(t.bookingId, t.state); !error.isEmpty())
        return error;
    // A booking is created by a BookingRecord; a transition back to "assigned" is a reassign.
    if (t.state == u"assigned")
        return writeReassign(t);
    return moveState(t.bookingId, t.state, t.carId, t.atMs, t.dropoff);
}

QString LedgerRecordWriter::writeReassign(const TransitionRecord &t)
{
    m_reassign.bindValue(0, qint64(t.bookingId));
    m_reassign.bindValue(1, t.carId);
    m_reassign.bindValue(2, t.atMs);
    if (QString error = run(m_reassign, QStringLiteral("reassigning a booking")); !error.isEmpty())
        return error;
    m_transition.bindValue(0, qint64(t.bookingId));
    m_transition.bindValue(1, t.state);
    m_transition.bindValue(2, t.carId);
    m_transition.bindValue(3, t.atMs);
    return run(m_transition, QStringLiteral("writing a transition"));
}

QString LedgerRecordWriter::writeTrip(const TripRecord &t)
{
    if (QString error = checkBooking(t.bookingId, QStringLiteral("completed")); !error.isEmpty())
        return error;
    const QVariant values[] = {qint64(t.bookingId),   t.carId,           t.riderId,      t.startedMs,     t.endedMs,
                               t.distanceM,           t.durationS,       t.fare.total,   t.fare.currency, t.fare.base,
                               t.fare.distanceCharge, t.fare.timeCharge, t.fare.minimum, t.fare.surge};
    for (int i = 0; i < int(std::size(values)); ++i)
        m_trip.bindValue(i, values[i]);
    if (QString error = run(m_trip, QStringLiteral("writing a trip")); !error.isEmpty())
        return error;
    return moveState(t.bookingId, QStringLiteral("completed"), t.carId, t.endedMs, std::nullopt);
}

QString LedgerRecordWriter::writeEvent(const EventRecord &e)
{
    if (e.kind.isEmpty())
        return QStringLiteral("ledger: an event needs a kind");
    m_event.bindValue(0, e.atMs);
    m_event.bindValue(1, e.kind);
    m_event.bindValue(2, QString::fromUtf8(QJsonDocument(e.detail).toJson(QJsonDocument::Compact)));
    m_event.bindValue(3, m_pid);
    return run(m_event, QStringLiteral("writing an event"));
}

QString LedgerRecordWriter::writeProgress(const ProgressRecord &p)
{
    if (QString error = checkBooking(p.bookingId, QStringLiteral("on_trip")); !error.isEmpty())
        return error;
    const LedgerProgress &at = p.progress;
    const double waitedS = at.waitedS.value_or(0);
    const QVariant values[] = {
        at.carAt.lat, at.carAt.lng, latOf(at.destination), lngOf(at.destination), at.tripDistanceM, at.tripElapsedS,
        waitedS,      at.atMs,      qint64(p.bookingId),   at.tripElapsedS,       at.tripElapsedS,  waitedS,
        waitedS,      at.atMs};
    for (int i = 0; i < int(std::size(values)); ++i)
        m_progress.bindValue(i, values[i]);
    return run(m_progress, QStringLiteral("checkpointing a booking's progress"));
}

QString LedgerRecordWriter::moveState(quint64 bookingId, const QString &state, int carId, qint64 atMs,
                                      const std::optional<LedgerPoint> &dropoff)
{
    const QVariant values[] = {qint64(bookingId),      carId, latOf(dropoff), lngOf(dropoff), state,
                               ledgerStateRank(state), atMs};
    for (int i = 0; i < int(std::size(values)); ++i)
        m_state.bindValue(i, values[i]);
    if (QString error = run(m_state, QStringLiteral("updating a booking's state")); !error.isEmpty())
        return error;
    m_transition.bindValue(0, qint64(bookingId));
    m_transition.bindValue(1, state);
    m_transition.bindValue(2, carId);
    m_transition.bindValue(3, atMs);
    return run(m_transition, QStringLiteral("writing a transition"));
}

QString LedgerRecordWriter::run(QSqlQuery &query, const QString &doing)
{
    const bool done = query.exec();
    const QString error = done ? QString() : m_connection.describe(query.lastError(), doing);
    query.finish();
    return error;
}

} // namespace taxicore
