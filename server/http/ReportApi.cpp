#include "http/ReportApi.h"

#include "fleet/FleetStore.h"
#include "wire/ApiError.h"
#include "http/LedgerLookups.h"
#include "http/OperatorAccess.h"
#include "wire/RequestInput.h"
#include "http/RouteTable.h"
#include "ledger/LedgerQueries.h"

#include <QDateTime>
#include <QJsonArray>
#include <cmath>

namespace taxicore {

namespace {

constexpr qint64 kDefaultSpanMs = 24LL * 3600 * 1000;
constexpr int kMaxTripsListed = 10'000;

qint64 readTime(const ApiRequest &request, const char *name, qint64 fallback)
{
    const QString key = QString::fromLatin1(name);
    if (!request.query.hasQueryItem(key))
        return fallback;
    const QString text = request.query.queryItemValue(key, QUrl::FullyDecoded);
    bool isNumber = false;
    const qint64 ms = text.toLongLong(&isNumber);
    if (isNumber)
        return ms;
    const QDateTime time = QDateTime::fromString(text, Qt::ISODateWithMs);
    if (!time.isValid())
        throwApiError(400, "bad_time", QStringLiteral("%1 must be ms since the epoch or an ISO 8601 time").arg(key),
                      {{QStringLiteral("field"), key}});
    return time.toMSecsSinceEpoch();
}

std::pair<qint64, qint64> readSpan(const ApiRequest &request)
{
    const qint64 to = readTime(request, "to", clock::wallMs() + 1);
    const qint64 from = readTime(request, "from", to - kDefaultSpanMs);
    if (from >= to)
        throwApiError(400, "bad_span", QStringLiteral("from must be before to"));
    return {from, to};
}

QJsonObject tripJson(const TripRecord &t)
{
    return {{QStringLiteral("booking_id"), qint64(t.bookingId)},
            {QStringLiteral("car_id"), t.carId},
            {QStringLiteral("rider_id"), t.riderId},
            {QStringLiteral("started_ms"), t.startedMs},
            {QStringLiteral("ended_ms"), t.endedMs},
            {QStringLiteral("distance_m"), std::round(t.distanceM * 10) / 10}, // 0.1 m, as every distance
            {QStringLiteral("duration_s"), std::round(t.durationS * 10) / 10},
            {QStringLiteral("fare"), t.fare.total},
            {QStringLiteral("currency"), t.fare.currency}};
}

using Span = std::pair<qint64, qint64>;

ApiResponse tripsList(Span span, int limit, const LedgerQueries &reader, LedgerLookups &lookups)
{
    const auto [from, to] = span;
    // One more than listed, read to tell whether there are more: never the whole span's trips.
    const std::vector<TripRecord> trips = lookups.readLedger([&] { return reader.trips(from, to, limit + 1); });
    QJsonArray list;
    for (std::size_t i = 0; i < trips.size() && i < std::size_t(limit); ++i)
        list.append(tripJson(trips[i]));
    return jsonResponse({{QStringLiteral("from_ms"), from},
                         {QStringLiteral("to_ms"), to},
                         {QStringLiteral("trips"), list},
                         {QStringLiteral("truncated"), trips.size() > std::size_t(limit)}});
}

ApiResponse operatorsReport(Span span, bool csvWanted, const LedgerQueries &reader, LedgerLookups &lookups)
{
    const auto [from, to] = span;
    const LedgerReport report = lookups.readLedger([&] { return reader.report(from, to); });
    if (csvWanted) {
        ApiResponse csv = textResponse(ledgerReportCsv(report));
        csv.contentType = QByteArrayLiteral("text/csv; charset=utf-8");
        return csv;
    }
    QJsonArray byHour;
    for (int hour = 0; hour < 24; ++hour) {
        const LedgerHourBucket &b = report.byHour[std::size_t(hour)];
        byHour.append(QJsonObject{{QStringLiteral("hour"), hour},
                                  {QStringLiteral("trips"), b.trips},
                                  {QStringLiteral("revenue"), b.revenue}});
    }
    return jsonResponse({{QStringLiteral("from_ms"), from},
                         {QStringLiteral("to_ms"), to},
                         {QStringLiteral("trips"), report.trips},
                         {QStringLiteral("revenue"), report.revenue},
                         {QStringLiteral("average_fare"), report.averageFare},
                         {QStringLiteral("currency"), report.currency},
                         {QStringLiteral("by_hour"), byHour}});
}

} // namespace

void registerReportRoutes(RouteTable &router, const LedgerQueries &reader, LedgerLookups &lookups)
{
    // Missing operator rights and bad spans are answered at once; only the read itself waits.
    // Every rider's trips (who rode when, which car, the fare): for operators, like the report.
    router.add(HttpMethod::Get, "/api/v1/trips", [&reader, &lookups](const ApiRequest &request) {
        requireOperator(request);
        const int limit = int(queryNumber(request, "limit", 1, kMaxTripsListed, kMaxTripsListed));
        return lookups.defer(request, [&reader, &lookups, span = readSpan(request), limit] {
            return tripsList(span, limit, reader, lookups);
        });
    });
    router.add(HttpMethod::Get, "/admin/v1/report", [&reader, &lookups](const ApiRequest &request) {
        requireOperator(request);
        const bool csv = request.query.queryItemValue(QStringLiteral("format")) == QStringLiteral("csv");
        return lookups.defer(request, [&reader, &lookups, span = readSpan(request), csv] {
            return operatorsReport(span, csv, reader, lookups);
        });
    });
}

} // namespace taxicore
