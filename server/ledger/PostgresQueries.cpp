#include "ledger/PostgresQueries.h"

#include "ledger/PostgresNodeSlot.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <libpq-fe.h>

namespace taxicore {

namespace {

#define TAXICORE_BOOKING_COLUMNS                                                                                       \
    "SELECT id, state, car_id, rider_id, pickup_lat, pickup_lng, dropoff_lat, dropoff_lng, created_ms, updated_ms,"    \
    " rider_token_hash, surge, quote_total, quote_base, quote_distance, quote_time, quote_minimum, quote_distance_m,"  \
    " quote_duration_s, car_lat, car_lng, destination_lat, destination_lng, trip_distance_m, trip_elapsed_s,"          \
    " progress_ms, waited_s FROM bookings"
#define TAXICORE_TRIP_COLUMNS                                                                                          \
    "SELECT booking_id, car_id, rider_id, started_ms, ended_ms, distance_m, duration_s, fare_base, fare_distance,"     \
    " fare_time, fare_minimum, fare_surge, fare_total, currency FROM trips"

// Rows without created_ms are no bookings (see LedgerReader.cpp): a move made them, their
// booking's record never committed.
const QByteArray kOpenBookings =
    TAXICORE_BOOKING_COLUMNS " WHERE state_rank < 4 AND created_ms IS NOT NULL ORDER BY id";
const QByteArray kBooking = TAXICORE_BOOKING_COLUMNS " WHERE id = $1::bigint AND created_ms IS NOT NULL";
const QByteArray kBookingByKey =
    TAXICORE_BOOKING_COLUMNS " WHERE id = (SELECT booking_id FROM idempotency_keys WHERE token_hash = $1::bytea)";
const QByteArray kTripOf = TAXICORE_TRIP_COLUMNS " WHERE booking_id = $1::bigint";
const QByteArray kTrips =
    TAXICORE_TRIP_COLUMNS " WHERE ended_ms >= $1::bigint AND ended_ms < $2::bigint ORDER BY ended_ms, booking_id"
                          " LIMIT $3::bigint";
// What a report sums, no more (libpq holds the whole answer: three columns of each trip).
const QByteArray kTripSums =
    "SELECT ended_ms, fare_total, currency FROM trips WHERE ended_ms >= $1::bigint AND ended_ms < $2::bigint";
const QByteArray kEvents =
    "SELECT at_ms, kind, detail FROM events WHERE at_ms >= $1::bigint AND at_ms < $2::bigint ORDER BY at_ms, id";

#undef TAXICORE_BOOKING_COLUMNS
#undef TAXICORE_TRIP_COLUMNS

// One row of a result, read by column.
struct Row {
    const pg_result *r;
    int row;

    bool isNull(int c) const { return PQgetisnull(r, row, c); }
    QString text(int c) const { return QString::fromUtf8(PQgetvalue(r, row, c)); }
    double real(int c) const { return QByteArray(PQgetvalue(r, row, c)).toDouble(); }
    qint64 integer(int c) const { return QByteArray(PQgetvalue(r, row, c)).toLongLong(); }
    QByteArray bytes(int c) const
    {
        if (isNull(c))
            return {};
        size_t length = 0;
        unsigned char *raw = PQunescapeBytea(reinterpret_cast<const unsigned char *>(PQgetvalue(r, row, c)), &length);
        QByteArray out(reinterpret_cast<const char *>(raw), qsizetype(length));
        PQfreemem(raw);
        return out;
    }
    std::optional<LedgerPoint> point(int c) const
    {
        if (isNull(c))
            return std::nullopt;
        return LedgerPoint{real(c), real(c + 1)};
    }
};

// Columns from `first` on: surge, the quote (8 columns), the checkpoint (7) and its age at the
// checkpoint, as LedgerReader.
void readPriceAndProgress(const Row &q, int first, BookingRecord &b)
{
    if (!q.isNull(first))
        b.surge = q.real(first);
    if (!q.isNull(first + 1)) {
        LedgerQuote quote;
        quote.fare.total = q.real(first + 1);
        quote.fare.base = q.real(first + 2);
        quote.fare.distanceCharge = q.real(first + 3);
        quote.fare.timeCharge = q.real(first + 4);
        quote.fare.minimum = q.real(first + 5);
        quote.fare.surge = b.surge.value_or(1.0);
        quote.distanceM = q.real(first + 6);
        quote.durationS = q.real(first + 7);
        b.quote = quote;
    }
    const int at = first + 8;
    if (!q.isNull(at) && !q.isNull(at + 6)) {
        LedgerProgress progress;
        progress.carAt = q.point(at).value_or(LedgerPoint{});
        progress.destination = q.point(at + 2);
        progress.tripDistanceM = q.real(at + 4);
        progress.tripElapsedS = q.real(at + 5);
        progress.atMs = q.integer(at + 6);
        if (!q.isNull(at + 7))
            progress.waitedS = q.real(at + 7);
        b.progress = progress;
    }
}

BookingRecord bookingAt(const Row &q)
{
    BookingRecord b;
    b.bookingId = quint64(q.integer(0));
    b.state = q.text(1);
    b.carId = int(q.integer(2));
    b.riderId = q.text(3);
    b.pickup = q.point(4).value_or(LedgerPoint{});
    b.dropoff = q.point(6);
    b.createdMs = q.integer(8);
    b.atMs = q.integer(9);
    b.riderTokenHash = q.bytes(10);
    readPriceAndProgress(q, 11, b);
    return b;
}

TripRecord tripAt(const Row &q)
{
    TripRecord t;
    t.bookingId = quint64(q.integer(0));
    t.carId = int(q.integer(1));
    t.riderId = q.text(2);
    t.startedMs = q.integer(3);
    t.endedMs = q.integer(4);
    t.distanceM = q.real(5);
    t.durationS = q.real(6);
    t.fare.base = q.real(7);
    t.fare.distanceCharge = q.real(8);
    t.fare.timeCharge = q.real(9);
    t.fare.minimum = q.real(10);
    t.fare.surge = q.real(11);
    t.fare.total = q.real(12);
    t.fare.currency = q.text(13);
    return t;
}

template <typename Each> void forEachRow(const PgResult &result, Each each)
{
    for (int i = 0; result && i < PQntuples(result.get()); ++i)
        each(Row{result.get(), i});
}

} // namespace

PostgresQueries::PostgresQueries(PostgresConnection::Settings settings, const PostgresNodeSlot *slot)
    : m_connection(std::move(settings))
    , m_slot(slot)
{
}

PgResult PostgresQueries::select(const QByteArray &sql, const PgParams &params, QString *error) const
{
    std::lock_guard lock(m_mutex);
    return m_connection.exec(sql, params, error);
}

LedgerResult<std::vector<BookingRecord>> PostgresQueries::openBookings() const
{
    LedgerResult<std::vector<BookingRecord>> out;
    const PgResult result = select(kOpenBookings, PgParams(), &out.error);
    forEachRow(result, [&](const Row &row) { out.value.push_back(bookingAt(row)); });
    return out;
}

LedgerResult<std::optional<StoredBooking>> PostgresQueries::booking(quint64 id) const
{
    return storedBooking(kBooking, PgParams().add(qint64(id)));
}

LedgerResult<std::optional<StoredBooking>> PostgresQueries::bookingByKey(const QByteArray &tokenHash) const
{
    return storedBooking(kBookingByKey, PgParams().addBytes(tokenHash));
}

LedgerResult<std::optional<StoredBooking>> PostgresQueries::storedBooking(const QByteArray &sql,
                                                                          const PgParams &key) const
{
    LedgerResult<std::optional<StoredBooking>> out;
    const PgResult found = select(sql, key, &out.error);
    forEachRow(found, [&](const Row &row) { out.value = StoredBooking{bookingAt(row), std::nullopt}; });
    if (!out.ok() || !out.value)
        return out;
    const PgResult trip = select(kTripOf, PgParams().add(qint64(out.value->booking.bookingId)), &out.error);
    forEachRow(trip, [&](const Row &row) { out.value->trip = tripAt(row); });
    return out;
}

LedgerResult<std::vector<TripRecord>> PostgresQueries::trips(qint64 fromMs, qint64 toMs, int limit) const
{
    LedgerResult<std::vector<TripRecord>> out;
    const PgResult result = select(kTrips, PgParams().add(fromMs).add(toMs).add(limit), &out.error);
    forEachRow(result, [&](const Row &row) { out.value.push_back(tripAt(row)); });
    return out;
}

LedgerResult<LedgerReport> PostgresQueries::report(qint64 fromMs, qint64 toMs, const QTimeZone &zone) const
{
    LedgerResult<LedgerReport> out{startLedgerReport(fromMs, toMs), {}};
    const PgResult result = select(kTripSums, PgParams().add(fromMs).add(toMs), &out.error);
    forEachRow(result,
               [&](const Row &row) { addToLedgerReport(out.value, row.integer(0), row.real(1), row.text(2), zone); });
    finishLedgerReport(out.value);
    return out;
}

LedgerResult<std::vector<EventRecord>> PostgresQueries::events(qint64 fromMs, qint64 toMs) const
{
    LedgerResult<std::vector<EventRecord>> out;
    const PgResult result = select(kEvents, PgParams().add(fromMs).add(toMs), &out.error);
    forEachRow(result, [&](const Row &row) {
        EventRecord e;
        e.atMs = row.integer(0);
        e.kind = row.text(1);
        e.detail = QJsonDocument::fromJson(row.text(2).toUtf8()).object();
        out.value.push_back(std::move(e));
    });
    return out;
}

LedgerResult<quint64> PostgresQueries::maxBookingId() const
{
    LedgerResult<quint64> out;
    const int slot = m_slot ? m_slot->slot() : 0;
    const qint64 low = qint64(slot) << PostgresNodeSlot::kIdBits;
    const qint64 high = qint64(slot + 1) << PostgresNodeSlot::kIdBits;
    const PgResult result =
        slot > 0
            ? select("SELECT coalesce(max(id), $1::bigint) FROM bookings WHERE id >= $1::bigint AND id < $2::bigint",
                     PgParams().add(low).add(high), &out.error)
            : select("SELECT coalesce(max(id), 0) FROM bookings", PgParams(), &out.error);
    forEachRow(result, [&](const Row &row) { out.value = quint64(row.integer(0)); });
    return out;
}

} // namespace taxicore
