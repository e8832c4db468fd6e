#include "ledger/LedgerReader.h"

#include "ledger/LedgerConnection.h"

#include <QFileInfo>
#include <QJsonDocument>
#include <QSqlError>
#include <QSqlQuery>

namespace taxicore {

namespace {

// A row without created_ms is no booking: a move of it committed first and its own record never
// did (its process died before the commit), so nobody was told it exists (the 201 follows that
// commit). Restoring it would hold a car for nobody; reading it back would keep a dead worker's
// booking in the fleet instead of withdrawing it (dispatch/AbandonedMoves).
#define TAXICORE_BOOKING_COLUMNS                                                                                       \
    "SELECT id, state, car_id, rider_id, pickup_lat, pickup_lng, dropoff_lat, dropoff_lng, created_ms, updated_ms,"    \
    " rider_token_hash, surge, quote_total, quote_base, quote_distance, quote_time, quote_minimum, quote_distance_m,"  \
    " quote_duration_s, car_lat, car_lng, destination_lat, destination_lng, trip_distance_m, trip_elapsed_s,"          \
    " progress_ms, waited_s FROM bookings"
const auto kOpenBookings =
    QStringLiteral(TAXICORE_BOOKING_COLUMNS " WHERE state_rank < 4 AND created_ms IS NOT NULL ORDER BY id");

const auto kBooking = QStringLiteral(TAXICORE_BOOKING_COLUMNS " WHERE id = ? AND created_ms IS NOT NULL");

const auto kBookingByKey = QStringLiteral(TAXICORE_BOOKING_COLUMNS
                                          " WHERE id = (SELECT booking_id FROM idempotency_keys WHERE token_hash = ?)");
#undef TAXICORE_BOOKING_COLUMNS

const auto kTripOf =
    QStringLiteral("SELECT booking_id, car_id, rider_id, started_ms, ended_ms, distance_m, duration_s, fare_base,"
                   " fare_distance, fare_time, fare_minimum, fare_surge, fare_total, currency FROM trips"
                   " WHERE booking_id = ?");

const auto kTrips =
    QStringLiteral("SELECT booking_id, car_id, rider_id, started_ms, ended_ms, distance_m, duration_s, fare_base,"
                   " fare_distance, fare_time, fare_minimum, fare_surge, fare_total, currency FROM trips"
                   " WHERE ended_ms >= ? AND ended_ms < ? ORDER BY ended_ms, booking_id LIMIT ?");
// What a report sums, no more (it reads every trip of the span).
const auto kTripSums =
    QStringLiteral("SELECT ended_ms, fare_total, currency FROM trips WHERE ended_ms >= ? AND ended_ms < ?");

const auto kEvents =
    QStringLiteral("SELECT at_ms, kind, detail FROM events WHERE at_ms >= ? AND at_ms < ? ORDER BY at_ms, id");

// Runs `sql` with `values` bound on a fresh reader connection; `row` sees each result row.
template <typename Row>
QString select(const LedgerOptions &options, const QString &sql, const QVariantList &values, Row row)
{
    const QString file = ledgerFilePath(options.dataDir);
    if (!QFileInfo::exists(file))
        return QStringLiteral("ledger %1: the file does not exist").arg(file);
    LedgerConnection connection;
    if (QString error = connection.open(file, options, LedgerConnection::Role::Reader); !error.isEmpty())
        return error;
    QSqlQuery query(connection.database());
    query.setForwardOnly(true);
    bool done = query.prepare(sql);
    for (int i = 0; done && i < values.size(); ++i)
        query.bindValue(i, values.at(i));
    done = done && query.exec();
    while (done && query.next())
        row(query);
    return done ? QString() : connection.describe(query.lastError(), QStringLiteral("reading"));
}

std::optional<LedgerPoint> pointAt(const QSqlQuery &query, int latColumn)
{
    if (query.isNull(latColumn))
        return std::nullopt;
    return LedgerPoint{query.value(latColumn).toDouble(), query.value(latColumn + 1).toDouble()};
}

// Schema 4's columns from `first` on: surge, the quote (8 columns) and the checkpoint (7), then
// schema 6's age at the checkpoint.
void readPriceAndProgress(const QSqlQuery &q, int first, BookingRecord &b)
{
    if (!q.isNull(first))
        b.surge = q.value(first).toDouble();
    if (!q.isNull(first + 1)) {
        LedgerQuote quote;
        quote.fare.total = q.value(first + 1).toDouble();
        quote.fare.base = q.value(first + 2).toDouble();
        quote.fare.distanceCharge = q.value(first + 3).toDouble();
        quote.fare.timeCharge = q.value(first + 4).toDouble();
        quote.fare.minimum = q.value(first + 5).toDouble();
        quote.fare.surge = b.surge.value_or(1.0);
        quote.distanceM = q.value(first + 6).toDouble();
        quote.durationS = q.value(first + 7).toDouble();
        b.quote = quote;
    }
    const int at = first + 8;
    if (!q.isNull(at) && !q.isNull(at + 6)) {
        LedgerProgress progress;
        progress.carAt = pointAt(q, at).value_or(LedgerPoint{});
        progress.destination = pointAt(q, at + 2);
        progress.tripDistanceM = q.value(at + 4).toDouble();
        progress.tripElapsedS = q.value(at + 5).toDouble();
        progress.atMs = q.value(at + 6).toLongLong();
        if (!q.isNull(at + 7))
            progress.waitedS = q.value(at + 7).toDouble();
        b.progress = progress;
    }
}

// A booking row of kOpenBookings / kBooking.
BookingRecord bookingAt(const QSqlQuery &q)
{
    BookingRecord b;
    b.bookingId = q.value(0).toULongLong();
    b.state = q.value(1).toString();
    b.carId = q.value(2).toInt();
    b.riderId = q.value(3).toString();
    b.pickup = pointAt(q, 4).value_or(LedgerPoint{});
    b.dropoff = pointAt(q, 6);
    b.createdMs = q.value(8).toLongLong();
    b.atMs = q.value(9).toLongLong();
    b.riderTokenHash = q.value(10).toByteArray();
    readPriceAndProgress(q, 11, b);
    return b;
}

// A trip row of kTrips / kTripOf.
TripRecord tripAt(const QSqlQuery &q)
{
    TripRecord t;
    t.bookingId = q.value(0).toULongLong();
    t.carId = q.value(1).toInt();
    t.riderId = q.value(2).toString();
    t.startedMs = q.value(3).toLongLong();
    t.endedMs = q.value(4).toLongLong();
    t.distanceM = q.value(5).toDouble();
    t.durationS = q.value(6).toDouble();
    t.fare.base = q.value(7).toDouble();
    t.fare.distanceCharge = q.value(8).toDouble();
    t.fare.timeCharge = q.value(9).toDouble();
    t.fare.minimum = q.value(10).toDouble();
    t.fare.surge = q.value(11).toDouble();
    t.fare.total = q.value(12).toDouble();
    t.fare.currency = q.value(13).toString();
    return t;
}

} // namespace

LedgerReader::LedgerReader(const LedgerOptions &options)
    : m_options(options)
{
}

LedgerResult<std::vector<BookingRecord>> LedgerReader::openBookings() const
{
    LedgerResult<std::vector<BookingRecord>> result;
    result.error =
        select(m_options, kOpenBookings, {}, [&](const QSqlQuery &q) { result.value.push_back(bookingAt(q)); });
    return result;
}

LedgerResult<std::optional<StoredBooking>> LedgerReader::booking(quint64 id) const
{
    return storedBooking(kBooking, qint64(id));
}

LedgerResult<std::optional<StoredBooking>> LedgerReader::bookingByKey(const QByteArray &tokenHash) const
{
    return storedBooking(kBookingByKey, tokenHash);
}

LedgerResult<std::optional<StoredBooking>> LedgerReader::storedBooking(const QString &sql, const QVariant &key) const
{
    LedgerResult<std::optional<StoredBooking>> result;
    result.error = select(m_options, sql, {key}, [&](const QSqlQuery &q) {
        result.value = StoredBooking{bookingAt(q), std::nullopt};
    });
    if (result.ok() && result.value)
        result.error = select(m_options, kTripOf, {qint64(result.value->booking.bookingId)},
                              [&](const QSqlQuery &q) { result.value->trip = tripAt(q); });
    return result;
}

LedgerResult<std::vector<TripRecord>> LedgerReader::trips(qint64 fromMs, qint64 toMs, int limit) const
{
    LedgerResult<std::vector<TripRecord>> result;
    result.error = select(m_options, kTrips, {fromMs, toMs, limit},
                          [&](const QSqlQuery &q) { result.value.push_back(tripAt(q)); });
    return result;
}

LedgerResult<LedgerReport> LedgerReader::report(qint64 fromMs, qint64 toMs, const QTimeZone &zone) const
{
    LedgerResult<LedgerReport> result{startLedgerReport(fromMs, toMs), {}};
    result.error = select(m_options, kTripSums, {fromMs, toMs}, [&](const QSqlQuery &q) {
        addToLedgerReport(result.value, q.value(0).toLongLong(), q.value(1).toDouble(), q.value(2).toString(), zone);
    });
    finishLedgerReport(result.value);
    return result;
}

LedgerResult<std::vector<EventRecord>> LedgerReader::events(qint64 fromMs, qint64 toMs) const
{
    LedgerResult<std::vector<EventRecord>> result;
    result.error = select(m_options, kEvents, {fromMs, toMs}, [&](const QSqlQuery &q) {
        EventRecord e;
        e.atMs = q.value(0).toLongLong();
        e.kind = q.value(1).toString();
        e.detail = QJsonDocument::fromJson(q.value(2).toString().toUtf8()).object();
        result.value.push_back(std::move(e));
    });
    return result;
}

LedgerResult<quint64> LedgerReader::maxBookingId() const
{
    LedgerResult<quint64> result;
    result.error = select(m_options, QStringLiteral("SELECT max(id) FROM bookings"), {},
                          [&](const QSqlQuery &q) { result.value = q.value(0).toULongLong(); });
    return result;
}

} // namespace taxicore
