#pragma once

#include "ledger/LedgerRecords.h"

#include <QByteArray>
#include <QTimeZone>
#include <array>
#include <vector>

namespace taxicore {

struct LedgerHourBucket {
    int trips = 0;
    double revenue = 0;
};

// Trips that ended in [fromMs, toMs): count, revenue, average fare, and the same by hour of day.
struct LedgerReport {
    qint64 fromMs = 0;
    qint64 toMs = 0;
    int trips = 0;
    double revenue = 0;
    double averageFare = 0;
    QString currency;                        // "mixed" when trips disagree; empty with no trips
    std::array<LedgerHourBucket, 24> byHour; // hour of the trip's end in the report's time zone
};

LedgerReport buildLedgerReport(const std::vector<TripRecord> &trips, qint64 fromMs, qint64 toMs, const QTimeZone &zone);
// The same one trip at a time, as a ledger reads them: an empty report of the span, each trip
// added (one outside the span is ignored), then finished (the average).
LedgerReport startLedgerReport(qint64 fromMs, qint64 toMs);
void addToLedgerReport(LedgerReport &report, qint64 endedMs, double fare, const QString &currency,
                       const QTimeZone &zone);
void finishLedgerReport(LedgerReport &report);
// hour,trips,revenue,average_fare: 24 rows then a "total" row; amounts with 2 decimals.
QByteArray ledgerReportCsv(const LedgerReport &report);
// One row per trip, with its fare breakdown; times in ISO 8601 UTC.
QByteArray ledgerTripsCsv(const std::vector<TripRecord> &trips);

} // namespace taxicore
