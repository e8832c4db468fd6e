#include "ledger/PostgresRecordWriter.h"

#include "ledger/LedgerStates.h"
#include "ledger/PostgresCommitOutcome.h"

#include <QCoreApplication>
#include <QHash>
#include <QJsonDocument>
#include <libpq-fe.h>
#include <algorithm>
#include <cmath>
#include <limits>

namespace taxicore {

namespace {

constexpr char kBatchStatement[] = "tc_batch";
constexpr char kForgetStatement[] = "tc_forget";

QString checkBooking(quint64 id, const QString &state)
{
    if (id == 0 || id > quint64(std::numeric_limits<qint64>::max()))
        return QStringLiteral("ledger: invalid booking id %1").arg(id);
    if (ledgerStateRank(state) < 0)
        return QStringLiteral("ledger: unknown booking state '%1'").arg(state);
    return {};
}

// One JSON object of taxicore_record fields, written by hand: the writer thread builds one per
// record, and a QJsonObject per record costs more than the statement it replaces.
class JsonRecord {
public:
    explicit JsonRecord(QByteArray &out)
        : m_out(out)
    {
        m_out += '{';
    }
    ~JsonRecord() { m_out += '}'; }

    JsonRecord &number(const char *key, qint64 value)
    {
        name(key);
        m_out += QByteArray::number(value);
        return *this;
    }
    JsonRecord &real(const char *key, double value)
    {
        name(key);
        if (std::isfinite(value))
            m_out += QByteArray::number(value, 'g', 17); // round-trips exactly, as PgParams
        else
            m_out += "null";
        return *this;
    }
    JsonRecord &real(const char *key, std::optional<double> value)
    {
        if (value)
            real(key, *value); // a missing key is NULL
        return *this;
    }
    JsonRecord &text(const char *key, const QString &value) { return utf8(key, value.toUtf8()); }
    JsonRecord &utf8(const char *key, const QByteArray &value)
    {
        name(key);
        m_out += '"';
        for (const char c : value) {
            if (c == '"' || c == '\\') {
                m_out += '\\';
                m_out += c;
            } else if (static_cast<unsigned char>(c) < 0x20) {
                static const char hex[] = "0123456789abcdef";
                m_out += "\\u00";
                m_out += hex[(c >> 4) & 0xf];
                m_out += hex[c & 0xf];
            } else {
                m_out += c;
            }
        }
        m_out += '"';
        return *this;
    }

private:
    void name(const char *key)
    {
        if (m_fields++)
            m_out += ',';
        m_out += '"';
        m_out += key;
        m_out += "\":";
    }

    QByteArray &m_out;
    int m_fields = 0;
};

void writeBooking(const BookingRecord &b, JsonRecord &j)
{
    j.utf8("k", "b").number("id", qint64(b.bookingId)).number("car", b.carId).text("state", b.state);
    j.number("rank", ledgerStateRank(b.state)).number("at", b.atMs).number("created", b.createdMs);
    j.text("rider", b.riderId).real("plat", b.pickup.lat).real("plng", b.pickup.lng);
    if (b.dropoff)
        j.real("dlat", b.dropoff->lat).real("dlng", b.dropoff->lng);
    if (!b.riderTokenHash.isEmpty())
        j.utf8("token", b.riderTokenHash.toHex());
    if (b.keyed)
        j.number("keyed", 1); // '1' is a boolean's text to PostgreSQL; absent is NULL (not keyed)
    j.real("surge", b.surge);
    if (b.quote) {
        const LedgerQuote &q = *b.quote;
        j.real("qtotal", q.fare.total).real("qbase", q.fare.base).real("qdist", q.fare.distanceCharge);
        j.real("qtime", q.fare.timeCharge).real("qmin", q.fare.minimum).real("qdm", q.distanceM);
        j.real("qds", q.durationS);
    }
}

void writeTransition(const TransitionRecord &t, JsonRecord &j)
{
    j.utf8("k", "m").number("id", qint64(t.bookingId)).number("car", t.carId).text("state", t.state);
    j.number("rank", ledgerStateRank(t.state)).number("at", t.atMs);
    if (t.dropoff)
        j.real("dlat", t.dropoff->lat).real("dlng", t.dropoff->lng);
}

void writeTrip(const TripRecord &t, JsonRecord &j)
{
    j.utf8("k", "t").number("id", qint64(t.bookingId)).number("car", t.carId).text("rider", t.riderId);
    j.number("started", t.startedMs).number("ended", t.endedMs).real("dist", t.distanceM).real("dur", t.durationS);
    j.real("total", t.fare.total).text("currency", t.fare.currency).real("fbase", t.fare.base);
    j.real("fdist", t.fare.distanceCharge).real("ftime", t.fare.timeCharge).real("fmin", t.fare.minimum);
    j.real("fsurge", t.fare.surge);
}

void writeProgress(const ProgressRecord &p, JsonRecord &j)
{
    const LedgerProgress &at = p.progress;
    j.utf8("k", "p").number("id", qint64(p.bookingId)).number("at", at.atMs);
    j.real("clat", at.carAt.lat).real("clng", at.carAt.lng);
    if (at.destination)
        j.real("dlat", at.destination->lat).real("dlng", at.destination->lng);
    j.real("tdist", at.tripDistanceM).real("telapsed", at.tripElapsedS).real("waited", at.waitedS.value_or(0));
}

void writeEvent(const EventRecord &e, JsonRecord &j)
{
    j.utf8("k", "e").number("at", e.atMs).text("kind", e.kind);
    j.utf8("detail", QJsonDocument(e.detail).toJson(QJsonDocument::Compact));
    j.number("pid", QCoreApplication::applicationPid());
}

} // namespace

QString PostgresRecordWriter::prepare(PostgresConnection &connection)
{
    QString error = connection.prepare(kBatchStatement, PostgresCommitOutcome::markedBatchSql());
    if (error.isEmpty())
        error = connection.prepare(kForgetStatement, PostgresCommitOutcome::forgetSql());
    return error;
}

QString PostgresRecordWriter::check(const LedgerRecord &record)
{
    return std::visit(
        [](const auto &r) -> QString {
            using T = std::decay_t<decltype(r)>;
            if constexpr (std::is_same_v<T, BookingRecord> || std::is_same_v<T, TransitionRecord>)
                return checkBooking(r.bookingId, r.state);
            else if constexpr (std::is_same_v<T, TripRecord>)
                return checkBooking(r.bookingId, QStringLiteral("completed"));
            else if constexpr (std::is_same_v<T, ProgressRecord>)
                return checkBooking(r.bookingId, QStringLiteral("on_trip"));
            else
                return r.kind.isEmpty() ? QStringLiteral("ledger: an event needs a kind") : QString();
        },
        record);
}

std::vector<int> PostgresRecordWriter::waves(const std::vector<const LedgerRecord *> &records)
{
    std::vector<int> out;
    out.reserve(records.size());
    QHash<qint64, int> lastOfBooking;
    QHash<int, int> lastOfCar;
    int floor = 0; // every record after a wave of its own comes later
    int highest = 0;
    for (const LedgerRecord *record : records) {
        qint64 booking = 0;
        int car = 0;
        bool alone = false;
        std::visit(
            [&](const auto &r) {
                using T = std::decay_t<decltype(r)>;
                if constexpr (!std::is_same_v<T, EventRecord>)
                    booking = qint64(r.bookingId);
                if constexpr (std::is_same_v<T, BookingRecord>)
                    car = r.carId;
                if constexpr (std::is_same_v<T, TransitionRecord>) {
                    car = r.carId;
                    alone = r.state == u"assigned" || r.carId <= 0;
                }
                if constexpr (std::is_same_v<T, TripRecord>) {
                    car = r.carId;
                    alone = r.carId <= 0;
                }
            },
            *record);
        if (booking == 0) {
            out.push_back(0); // an event: written before the waves, in order
            continue;
        }
        int wave = std::max(floor, lastOfBooking.value(booking)) + 1;
        if (car > 0)
            wave = std::max(wave, lastOfCar.value(car) + 1);
        if (alone) {
            wave = std::max(wave, highest + 1);
            floor = wave;
        }
        lastOfBooking.insert(booking, wave);
        if (car > 0)
            lastOfCar.insert(car, wave);
        highest = std::max(highest, wave);
        out.push_back(wave);
    }
    return out;
}

PgStatement PostgresRecordWriter::batchStatement(const std::vector<const LedgerRecord *> &records,
                                                 const PgBatchMark &mark)
{
    const std::vector<int> wave = waves(records);
    QByteArray json;
    json.reserve(qsizetype(records.size()) * 320 + 2);
    json += '[';
    for (std::size_t i = 0; i < records.size(); ++i) {
        if (i)
            json += ',';
        JsonRecord j(json);
        j.number("i", qint64(i + 1)).number("w", wave[i]);
        std::visit(
            [&j](const auto &r) {
                using T = std::decay_t<decltype(r)>;
                if constexpr (std::is_same_v<T, BookingRecord>)
                    writeBooking(r, j);
                else if constexpr (std::is_same_v<T, TransitionRecord>)
                    writeTransition(r, j);
                else if constexpr (std::is_same_v<T, TripRecord>)
                    writeTrip(r, j);
                else if constexpr (std::is_same_v<T, ProgressRecord>)
                    writeProgress(r, j);
                else
                    writeEvent(r, j);
            },
            *records[i]);
    }
    json += ']';
    PgStatement statement;
    statement.name = kBatchStatement;
    statement.params.addUtf8(std::move(json)).addUtf8(mark.writer).add(mark.batch);
    return statement;
}

PgStatement PostgresRecordWriter::forgetStatement(const PgBatchMark &before)
{
    return {kForgetStatement, PostgresCommitOutcome::forgetParams(before)};
}

bool PostgresRecordWriter::readVerdicts(PostgresConnection &connection, const pg_result *result,
                                        std::vector<QString> &verdicts, QString *error)
{
    if (!result || PQresultStatus(result) != PGRES_TUPLES_OK) {
        *error = connection.describe(result, QStringLiteral("writing the records"));
        return false;
    }
    for (int row = 0; row < PQntuples(result); ++row) {
        const int at = QByteArray(PQgetvalue(result, row, 0)).toInt();
        if (at >= 1 && std::size_t(at) <= verdicts.size())
            verdicts[std::size_t(at - 1)] = QString::fromUtf8(PQgetvalue(result, row, 1));
    }
    return true;
}

} // namespace taxicore
