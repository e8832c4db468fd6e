// Reports on known data: trips in a range, count, revenue, average fare, by hour; CSV export;
// the restore scan returns only the open bookings.
#include "LedgerTestSupport.h"

#include <QTemporaryDir>
#include <QTest>

using namespace taxicore;
using namespace ledgertest;

namespace {
// 2026-11-30T00:00:00Z
constexpr qint64 kMidnight = 1'795'996'800'000;
constexpr qint64 kHour = 3'600'000;
} // namespace

class LedgerReportTest : public QObject {
    Q_OBJECT

private slots:
    void init();
    void cleanup();
    void reportSumsTripsInRange();
    void reportGroupsByHour();
    void reportHoursFollowTimeZone();
    void reportCsvHasHoursAndTotal();
    void tripsCsvQuotesAndBreaksDownFares();
    void openBookingsReturnsOpenOnesOnly();

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<Ledger> m_ledger;
};

void LedgerReportTest::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    auto opened = Ledger::open(optionsFor(m_dir->path()));
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    m_ledger = std::move(opened.ledger);
    // Known data: 10:15 (100.00), 10:45 (150.50), 13:05 (95.00), and one outside (next day).
    const std::pair<qint64, double> trips[] = {{kMidnight + 10 * kHour + 15 * 60000, 100.0},
                                               {kMidnight + 10 * kHour + 45 * 60000, 150.5},
                                               {kMidnight + 13 * kHour + 5 * 60000, 95.0},
                                               {kMidnight + 25 * kHour, 500.0}};
    quint64 id = 1;
    for (const auto &[endedMs, total] : trips) {
        QVERIFY(m_ledger->appendAndWait(booking(id, QStringLiteral("assigned"), endedMs - kHour)));
        QVERIFY(m_ledger->appendAndWait(trip(id, endedMs, total)));
        ++id;
    }
}

void LedgerReportTest::cleanup()
{
    m_ledger.reset();
    m_dir.reset();
}

void LedgerReportTest::reportSumsTripsInRange()
{
    const auto trips = m_ledger->reader().trips(kMidnight, kMidnight + 24 * kHour, 10);
    QVERIFY2(trips.ok(), qPrintable(trips.error));
    QCOMPARE(trips.value.size(), std::size_t(3));
    QCOMPARE(trips.value.front().bookingId, quint64(1));
    // At most `limit`, the first by their end.
    const auto firstTwo = m_ledger->reader().trips(kMidnight, kMidnight + 24 * kHour, 2);
    QCOMPARE(firstTwo.value.size(), std::size_t(2));
    QCOMPARE(firstTwo.value.at(0).bookingId, trips.value.at(0).bookingId);
    QCOMPARE(firstTwo.value.at(1).bookingId, trips.value.at(1).bookingId);

    const auto report = m_ledger->reader().report(kMidnight, kMidnight + 24 * kHour);
    QVERIFY2(report.ok(), qPrintable(report.error));
    QCOMPARE(report.value.trips, 3);
    QCOMPARE(report.value.revenue, 345.5);
    QCOMPARE(report.value.averageFare, 345.5 / 3);
    QCOMPARE(report.value.currency, QStringLiteral("SEK"));
    // The range is half-open on the end time.
    QCOMPARE(m_ledger->reader().report(kMidnight, kMidnight + 10 * kHour + 15 * 60000).value.trips, 0);
}

void LedgerReportTest::reportGroupsByHour()
{
    const LedgerReport report = m_ledger->reader().report(kMidnight, kMidnight + 24 * kHour).value;
    QCOMPARE(report.byHour[10].trips, 2);
    QCOMPARE(report.byHour[10].revenue, 250.5);
    QCOMPARE(report.byHour[13].trips, 1);
    QCOMPARE(report.byHour[13].revenue, 95.0);
    int total = 0;
    for (const LedgerHourBucket &bucket : report.byHour)
        total += bucket.trips;
    QCOMPARE(total, 3);
}

void LedgerReportTest::reportHoursFollowTimeZone()
{
    const QTimeZone stockholm(QByteArrayLiteral("Europe/Stockholm")); // UTC+1 in November
    QVERIFY(stockholm.isValid());
    const LedgerReport report = m_ledger->reader().report(kMidnight, kMidnight + 24 * kHour, stockholm).value;
    QCOMPARE(report.byHour[11].trips, 2);
    QCOMPARE(report.byHour[14].trips, 1);
}

void LedgerReportTest::reportCsvHasHoursAndTotal()
{
    const QByteArray csv = ledgerReportCsv(m_ledger->reader().report(kMidnight, kMidnight + 24 * kHour).value);
    const QList<QByteArray> lines = csv.trimmed().split('\n');
    QCOMPARE(lines.size(), 1 + 24 + 1);
    QCOMPARE(lines.at(0), QByteArray("hour,trips,revenue,average_fare"));
    QCOMPARE(lines.at(1 + 10), QByteArray("10,2,250.50,125.25"));
    QCOMPARE(lines.at(1 + 11), QByteArray("11,0,0.00,0.00"));
    QCOMPARE(lines.at(1 + 13), QByteArray("13,1,95.00,95.00"));
    QCOMPARE(lines.last(), QByteArray("total,3,345.50,115.17"));
}

void LedgerReportTest::tripsCsvQuotesAndBreaksDownFares()
{
    std::vector<TripRecord> trips = m_ledger->reader().trips(kMidnight, kMidnight + 11 * kHour, 10).value;
    QCOMPARE(trips.size(), std::size_t(2));
    trips[0].riderId = QStringLiteral("Smith, \"J\"");
    const QList<QByteArray> lines = ledgerTripsCsv(trips).trimmed().split('\n');
    QCOMPARE(lines.size(), 3);
    QVERIFY(lines.at(0).startsWith("booking_id,car_id,rider_id,started,ended,distance_m"));
    QVERIFY2(lines.at(1).startsWith("1,2,\"Smith, \"\"J\"\"\",2026-11-30T10:05:00.000Z,2026-11-30T10:15:00.000Z,"
                                    "3000.0,600.0,45.00,40.50,55.00,95.00,1.00,100.00,SEK"),
             lines.at(1).constData());
}

void LedgerReportTest::openBookingsReturnsOpenOnesOnly()
{
    // 5 assigned; 6 arriving; 7 on_trip; 8 cancelled; 1..4 completed by init().
    QVERIFY(m_ledger->appendAndWait(booking(5)));
    QVERIFY(m_ledger->appendAndWait(booking(6)));
    QVERIFY(m_ledger->appendAndWait(TransitionRecord{6, QStringLiteral("arriving"), 7, 1, {}}));
    QVERIFY(m_ledger->appendAndWait(booking(7)));
    QVERIFY(m_ledger->appendAndWait(TransitionRecord{7, QStringLiteral("on_trip"), 8, 2, {}}));
    QVERIFY(m_ledger->appendAndWait(booking(8)));
    QVERIFY(m_ledger->appendAndWait(TransitionRecord{8, QStringLiteral("cancelled"), 9, 3, {}}));
    // A "crash": the process goes away without anything but the file left behind.
    const QString dir = m_dir->path();
    m_ledger.reset();

    auto reopened = Ledger::open(optionsFor(dir));
    QVERIFY2(reopened.ledger, qPrintable(reopened.error));
    const auto open = reopened.ledger->reader().openBookings();
    QVERIFY2(open.ok(), qPrintable(open.error));
    QCOMPARE(open.value.size(), std::size_t(3));
    QCOMPARE(open.value[0].bookingId, quint64(5));
    QCOMPARE(open.value[0].state, QStringLiteral("assigned"));
    QCOMPARE(open.value[0].carId, 6);
    QCOMPARE(open.value[1].state, QStringLiteral("arriving"));
    QCOMPARE(open.value[2].state, QStringLiteral("on_trip"));
    QCOMPARE(open.value[2].riderId, QStringLiteral("rider-7"));
    QCOMPARE(reopened.ledger->reader().maxBookingId().value, quint64(8));
}

QTEST_GUILESS_MAIN(LedgerReportTest)
#include "ledger_report_test.moc"
