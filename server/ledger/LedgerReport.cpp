#include "ledger/LedgerReport.h"

#include <QDateTime>

namespace taxicore {

namespace {

QByteArray money(double amount)
{
    return QByteArray::number(amount, 'f', 2);
}

// RFC 4180: quote a field holding a separator, a quote or a line break.
QByteArray csvField(const QString &text)
{
    QByteArray bytes = text.toUtf8();
    if (!bytes.contains(',') && !bytes.contains('"') && !bytes.contains('\n') && !bytes.contains('\r'))
        return bytes;
    bytes.replace("\"", "\"\"");
    return '"' + bytes + '"';
}

QByteArray isoUtc(qint64 ms)
{
    return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC).toString(Qt::ISODateWithMs).toUtf8();
}

} // namespace

LedgerReport startLedgerReport(qint64 fromMs, qint64 toMs)
{
    LedgerReport report;
    report.fromMs = fromMs;
    report.toMs = toMs;
    return report;
}

void addToLedgerReport(LedgerReport &report, qint64 endedMs, double fare, const QString &currency,
                       const QTimeZone &zone)
{
    if (endedMs < report.fromMs || endedMs >= report.toMs)
        return;
    ++report.trips;
    report.revenue += fare;
    const int hour = QDateTime::fromMSecsSinceEpoch(endedMs, zone).time().hour();
    LedgerHourBucket &bucket = report.byHour[std::size_t(std::clamp(hour, 0, 23))];
    ++bucket.trips;
    bucket.revenue += fare;
    if (report.currency.isEmpty())
        report.currency = currency;
    else if (report.currency != currency)
        report.currency = QStringLiteral("mixed");
}

void finishLedgerReport(LedgerReport &report)
{
    report.averageFare = report.trips > 0 ? report.revenue / report.trips : 0;
}

LedgerReport buildLedgerReport(const std::vector<TripRecord> &trips, qint64 fromMs, qint64 toMs, const QTimeZone &zone)
{
    LedgerReport report = startLedgerReport(fromMs, toMs);
    for (const TripRecord &trip : trips)
        addToLedgerReport(report, trip.endedMs, trip.fare.total, trip.fare.currency, zone);
    finishLedgerReport(report);
    return report;
}

QByteArray ledgerReportCsv(const LedgerReport &report)
{
    QByteArray csv = "hour,trips,revenue,average_fare\n";
    for (std::size_t hour = 0; hour < report.byHour.size(); ++hour) {
        const LedgerHourBucket &b = report.byHour[hour];
        csv += QByteArray::number(qulonglong(hour)) + ',' + QByteArray::number(b.trips) + ',' + money(b.revenue) + ','
               + money(b.trips > 0 ? b.revenue / b.trips : 0) + '\n';
    }
    csv += "total," + QByteArray::number(report.trips) + ',' + money(report.revenue) + ',' + money(report.averageFare)
           + '\n';
    return csv;
}

QByteArray ledgerTripsCsv(const std::vector<TripRecord> &trips)
{
    QByteArray csv = "booking_id,car_id,rider_id,started,ended,distance_m,duration_s,base,"
                     "distance_charge,time_charge,minimum,surge,total,currency\n";
    for (const TripRecord &t : trips) {
        csv += QByteArray::number(t.bookingId) + ',' + QByteArray::number(t.carId) + ',' + csvField(t.riderId) + ','
               + isoUtc(t.startedMs) + ',' + isoUtc(t.endedMs) + ',' + QByteArray::number(t.distanceM, 'f', 1) + ','
               + QByteArray::number(t.durationS, 'f', 1) + ',' + money(t.fare.base) + ',' + money(t.fare.distanceCharge)
               + ',' + money(t.fare.timeCharge) + ',' + money(t.fare.minimum) + ','
               + QByteArray::number(t.fare.surge, 'f', 2) + ',' + money(t.fare.total) + ',' + csvField(t.fare.currency)
               + '\n';
    }
    return csv;
}

} // namespace taxicore
