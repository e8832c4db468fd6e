#include "ledger/PostgresRecordWriter.h"

#include "ledger/LedgerStates.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <libpq-fe.h>
#include <algorithm>
#include <limits>

namespace taxicore {

namespace {

const std::pair<QByteArray, QByteArray> kStatements[] = {
    {"tc_book", "SELECT taxicore_book($1::bigint, $2::text, $3::integer, $4::float8, $5::float8, $6::float8,"
                " $7::float8, $8::text, $9::integer, $10::bigint, $11::bigint, $12::bytea, $13::float8, $14::float8,"
                " $15::float8, $16::float8, $17::float8, $18::float8, $19::float8, $20::float8)"},
    {"tc_move", "SELECT taxicore_move($1::bigint, $2::text, $3::integer, $4::integer, $5::bigint, $6::float8,"
                " $7::float8)"},
    {"tc_trip", "SELECT taxicore_trip($1::bigint, $2::integer, $3::text, $4::bigint, $5::bigint, $6::float8,"
                " $7::float8, $8::float8, $9::text, $10::float8, $11::float8, $12::float8, $13::float8, $14::float8)"},
    {"tc_lock", "SELECT taxicore_lock_batch($1::integer[], $2::bigint[])"},
    {"tc_event", "INSERT INTO events (at_ms, kind, detail, pid) VALUES ($1::bigint, $2::text, $3::text, $4::bigint)"},
    // A checkpoint lands only on an open booking and only when newer than the stored one.
    {"tc_progress", "UPDATE bookings SET car_lat = $1::float8, car_lng = $2::float8, destination_lat = $3::float8,"
                    " destination_lng = $4::float8, trip_distance_m = $5::float8, trip_elapsed_s = $6::float8,"
                    " progress_ms = $7::bigint WHERE id = $8::bigint AND state_rank < 4"
                    " AND coalesce(progress_ms, 0) <= $7::bigint"},
};

QString checkBooking(quint64 id, const QString &state)
{
    if (id == 0 || id > quint64(std::numeric_limits<qint64>::max()))
        return QStringLiteral("ledger: invalid booking id %1").arg(id);
    if (ledgerStateRank(state) < 0)
        return QStringLiteral("ledger: unknown booking state '%1'").arg(state);
    return {};
}

std::optional<double> latOf(const std::optional<LedgerPoint> &point)
{
    return point ? std::optional<double>(point->lat) : std::nullopt;
}

std::optional<double> lngOf(const std::optional<LedgerPoint> &point)
{
    return point ? std::optional<double>(point->lng) : std::nullopt;
}

QString bookingStatement(const BookingRecord &b, PgStatement *s)
{
    if (QString error = checkBooking(b.bookingId, b.state); !error.isEmpty())
        return error;
    const auto quote = [&](auto field) { return b.quote ? std::optional<double>(field(*b.quote)) : std::nullopt; };
    s->name = "tc_book";
    s->params.add(qint64(b.bookingId)).add(b.riderId).add(b.carId).add(b.pickup.lat).add(b.pickup.lng);
    s->params.add(latOf(b.dropoff)).add(lngOf(b.dropoff)).add(b.state).add(ledgerStateRank(b.state));
    s->params.add(b.createdMs).add(b.atMs).addBytes(b.riderTokenHash).add(b.surge);
    s->params.add(quote([](const LedgerQuote &q) { return q.fare.total; }))
        .add(quote([](const LedgerQuote &q) { return q.fare.base; }))
        .add(quote([](const LedgerQuote &q) { return q.fare.distanceCharge; }))
        .add(quote([](const LedgerQuote &q) { return q.fare.timeCharge; }))
        .add(quote([](const LedgerQuote &q) { return q.fare.minimum; }))
        .add(quote([](const LedgerQuote &q) { return q.distanceM; }))
        .add(quote([](const LedgerQuote &q) { return q.durationS; }));
    return {};
}

QString transitionStatement(const TransitionRecord &t, PgStatement *s)
{
    if (QString error = checkBooking(t.bookingId, t.state); !error.isEmpty())
        return error;
    s->name = "tc_move";
    s->params.add(qint64(t.bookingId)).add(t.state).add(ledgerStateRank(t.state)).add(t.carId).add(t.atMs);
    s->params.add(latOf(t.dropoff)).add(lngOf(t.dropoff));
    return {};
}

QString tripStatement(const TripRecord &t, PgStatement *s)
{
    if (QString error = checkBooking(t.bookingId, QStringLiteral("completed")); !error.isEmpty())
        return error;
    s->name = "tc_trip";
    s->params.add(qint64(t.bookingId)).add(t.carId).add(t.riderId).add(t.startedMs).add(t.endedMs);
    s->params.add(t.distanceM).add(t.durationS).add(t.fare.total).add(t.fare.currency).add(t.fare.base);
    s->params.add(t.fare.distanceCharge).add(t.fare.timeCharge).add(t.fare.minimum).add(t.fare.surge);
    return {};
}

QString eventStatement(const EventRecord &e, PgStatement *s)
{
    if (e.kind.isEmpty())
        return QStringLiteral("ledger: an event needs a kind");
    s->name = "tc_event";
    s->params.add(e.atMs).add(e.kind).add(QString::fromUtf8(QJsonDocument(e.detail).toJson(QJsonDocument::Compact)));
    s->params.add(QCoreApplication::applicationPid());
    return {};
}

QString progressStatement(const ProgressRecord &p, PgStatement *s)
{
    if (QString error = checkBooking(p.bookingId, QStringLiteral("on_trip")); !error.isEmpty())
        return error;
    const LedgerProgress &at = p.progress;
    s->name = "tc_progress";
    s->params.add(at.carAt.lat).add(at.carAt.lng).add(latOf(at.destination)).add(lngOf(at.destination));
    s->params.add(at.tripDistanceM).add(at.tripElapsedS).add(at.atMs).add(qint64(p.bookingId));
    return {};
}

// A PostgreSQL array literal of the ids: "{3,7,12}".
template <typename Id> QString arrayLiteral(std::vector<Id> ids)
{
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    QString text = QStringLiteral("{");
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (i)
            text += u',';
        text += QString::number(ids[i]);
    }
    return text + u'}';
}

} // namespace

PgStatement PostgresRecordWriter::lockStatementFor(const std::vector<const LedgerRecord *> &records)
{
    std::vector<int> cars;
    std::vector<qint64> bookings;
    for (const LedgerRecord *record : records) {
        std::visit(
            [&](const auto &r) {
                using T = std::decay_t<decltype(r)>;
                if constexpr (!std::is_same_v<T, EventRecord>)
                    bookings.push_back(qint64(r.bookingId));
                if constexpr (
                    std::is_same_v<
                        T, BookingRecord> || std::is_same_v<T, TransitionRecord> || std::is_same_v<T, TripRecord>) {
                    if (r.carId > 0)
                        cars.push_back(r.carId);
                }
            },
            *record);
    }
    PgStatement statement;
    statement.name = "tc_lock";
    statement.params.add(arrayLiteral(std::move(cars))).add(arrayLiteral(std::move(bookings)));
    return statement;
}

QString PostgresRecordWriter::prepare(PostgresConnection &connection)
{
    for (const auto &[name, sql] : kStatements) {
        if (QString error = connection.prepare(name, sql); !error.isEmpty())
            return error;
    }
    return {};
}

QString PostgresRecordWriter::statementFor(const LedgerRecord &record, PgStatement *statement)
{
    return std::visit(
        [statement](const auto &r) -> QString {
            using T = std::decay_t<decltype(r)>;
            if constexpr (std::is_same_v<T, BookingRecord>)
                return bookingStatement(r, statement);
            else if constexpr (std::is_same_v<T, TransitionRecord>)
                return transitionStatement(r, statement);
            else if constexpr (std::is_same_v<T, TripRecord>)
                return tripStatement(r, statement);
            else if constexpr (std::is_same_v<T, ProgressRecord>)
                return progressStatement(r, statement);
            else
                return eventStatement(r, statement);
        },
        record);
}

QString PostgresRecordWriter::verdict(PostgresConnection &connection, const pg_result *result)
{
    const ExecStatusType status = result ? PQresultStatus(result) : PGRES_FATAL_ERROR;
    if (status == PGRES_COMMAND_OK)
        return {};
    if (status != PGRES_TUPLES_OK)
        return connection.describe(result, QStringLiteral("writing a record"));
    // The functions answer one text: empty, or why the record was refused.
    if (PQntuples(result) < 1 || PQgetisnull(result, 0, 0))
        return {};
    return QString::fromUtf8(PQgetvalue(result, 0, 0));
}

} // namespace taxicore
