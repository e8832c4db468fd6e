// The console's Reports view model (issue 8) against a real SQLite ledger written through the
// Ledger API: the trips of a custom date range, their sums and hours (checked by
// QAbstractItemModelTester too), the benchmark runs of the range, and the CSV export.
#include "TripReport.h"
#include "ledger/Ledger.h"
#include "ledger/LedgerReader.h"

#include <QAbstractItemModelTester>
#include <QFile>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimeZone>

using namespace taxicore;

namespace {
constexpr int kLoadTimeoutMs = 10000;
const QDate kFirstDay(2026, 1, 10);
const QDate kLastDay(2026, 1, 11);
const QString kAwkwardRider = QStringLiteral("a \"quoted\", rider");

qint64 localMs(QDate day, int hour, int minute)
{
    return QDateTime(day, QTime(hour, minute)).toMSecsSinceEpoch();
}

struct TripAt {
    quint64 id;
    qint64 endedMs;
    double total;
    QString rider;
};

// Four trips inside the range (two in the same hour), one just before it and one just after.
const std::vector<TripAt> &tripsWritten()
{
    static const std::vector<TripAt> trips = {
        {1, localMs(kFirstDay, 8, 15), 120.50, QStringLiteral("r1")},
        {2, localMs(kFirstDay, 8, 45), 99.50, kAwkwardRider},
        {3, localMs(kFirstDay, 17, 5), 250.00, QStringLiteral("r3")},
        {4, localMs(kLastDay, 23, 59), 80.00, QStringLiteral("r4")},
        {5, localMs(kFirstDay.addDays(-1), 23, 59), 1000.00, QStringLiteral("before")},
        {6, localMs(kLastDay.addDays(1), 0, 0), 2000.00, QStringLiteral("after")},
    };
    return trips;
}
} // namespace

class TripReportTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void sumsTheTripsOfTheRange();
    void listsTheBenchmarkRunsOfTheRange();
    void exportsQuotedCsv();
    void aBackwardsRangeIsAnErrorNotATable();

private:
    // A report of the custom range over the test ledger, loaded.
    void load(TripReport &report, const QString &from, const QString &to);

    QTemporaryDir m_dir;
    std::unique_ptr<Ledger> m_ledger;
};

void TripReportTest::initTestCase()
{
    QVERIFY(m_dir.isValid());
    LedgerOptions options;
    options.dataDir = m_dir.filePath(QStringLiteral("data"));
    auto opened = Ledger::open(options);
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    m_ledger = std::move(opened.ledger);
    for (const TripAt &t : tripsWritten()) {
        BookingRecord booking;
        booking.bookingId = t.id;
        booking.carId = int(t.id);
        booking.riderId = t.rider;
        booking.pickup = {57.70, 11.97};
        booking.createdMs = booking.atMs = t.endedMs - 600'000;
        QVERIFY(m_ledger->appendAndWait(booking));
        TripRecord trip;
        trip.bookingId = t.id;
        trip.carId = int(t.id);
        trip.riderId = t.rider;
        trip.startedMs = t.endedMs - 600'000;
        trip.endedMs = t.endedMs;
        trip.distanceM = 1500 + double(t.id);
        trip.durationS = 600;
        trip.fare.total = t.total;
        QVERIFY(m_ledger->appendAndWait(trip));
    }
    QVERIFY(m_ledger->appendAndWait(
        EventRecord{QStringLiteral("benchmark"),
                    {{QStringLiteral("requests_per_s"), 1234.5}, {QStringLiteral("mode"), QStringLiteral("pool")}},
                    localMs(kFirstDay, 12, 0)}));
    QVERIFY(m_ledger->appendAndWait(EventRecord{QStringLiteral("switch"), {}, localMs(kFirstDay, 12, 1)}));
    QVERIFY(m_ledger->appendAndWait(EventRecord{QStringLiteral("benchmark"), {}, localMs(kLastDay.addDays(2), 12, 0)}));
}

void TripReportTest::load(TripReport &report, const QString &from, const QString &to)
{
    QSignalSpy loaded(&report, &TripReport::loaded);
    report.setRange(QStringLiteral("custom"));
    report.setCustomFrom(from);
    report.setCustomTo(to);
    report.setReader(LedgerReader(m_ledger->options())); // the console reads the SQLite file itself
    // Each change may start a read; the last one reads the final range.
    QTRY_VERIFY_WITH_TIMEOUT(!report.loading() && !loaded.isEmpty(), kLoadTimeoutMs);
}

void TripReportTest::sumsTheTripsOfTheRange()
{
    TripReport report;
    QAbstractItemModelTester hourlyTester(report.hourly(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester tripsTester(report.trips(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    load(report, kFirstDay.toString(Qt::ISODate), kLastDay.toString(Qt::ISODate));

    QVERIFY2(report.error().isEmpty(), qPrintable(report.error()));
    QCOMPARE(report.fromMs(), localMs(kFirstDay, 0, 0));
    QCOMPARE(report.toMs(), localMs(kLastDay.addDays(1), 0, 0));
    QCOMPARE(report.tripCount(), 4);
    QCOMPARE(report.revenue(), 120.50 + 99.50 + 250.00 + 80.00);
    QCOMPARE(report.averageFare(), (120.50 + 99.50 + 250.00 + 80.00) / 4);
    QCOMPARE(report.currency(), QStringLiteral("SEK"));

    // By local hour of the end: 08 twice, 17 once, 23 once.
    HourlyTripsModel *hours = report.hourly();
    QCOMPARE(hours->rowCount(), 24);
    const auto at = [hours](int hour, int role) { return hours->data(hours->index(hour), role); };
    QCOMPARE(at(8, HourlyTripsModel::TripsRole).toInt(), 2);
    QCOMPARE(at(8, HourlyTripsModel::RevenueRole).toDouble(), 220.0);
    QCOMPARE(at(8, HourlyTripsModel::AverageFareRole).toDouble(), 110.0);
    QCOMPARE(at(17, HourlyTripsModel::TripsRole).toInt(), 1);
    QCOMPARE(at(23, HourlyTripsModel::TripsRole).toInt(), 1);
    QCOMPARE(at(0, HourlyTripsModel::TripsRole).toInt(), 0);
    QCOMPARE(hours->busiestTrips(), 2);
    QCOMPARE(hours->busiestRevenue(), 250.0);

    // The table: newest first, the range's trips only.
    TripListModel *trips = report.trips();
    QCOMPARE(trips->rowCount(), 4);
    QList<qint64> ids;
    for (int row = 0; row < trips->rowCount(); ++row)
        ids << trips->data(trips->index(row), TripListModel::BookingIdRole).toLongLong();
    QCOMPARE(ids, (QList<qint64>{4, 3, 2, 1}));
    QCOMPARE(trips->data(trips->index(2), TripListModel::RiderRole).toString(), kAwkwardRider);
    QCOMPARE(trips->data(trips->index(2), TripListModel::FareRole).toDouble(), 99.50);
    QCOMPARE(trips->data(trips->index(0), TripListModel::EndedTextRole).toString(),
             kLastDay.toString(Qt::ISODate) + QStringLiteral(" 23:59"));

    // One day of the range: the model changes in place (the testers watch every signal).
    load(report, kLastDay.toString(Qt::ISODate), kLastDay.toString(Qt::ISODate));
    QCOMPARE(report.tripCount(), 1);
    QCOMPARE(report.revenue(), 80.0);
    QCOMPARE(trips->rowCount(), 1);
    QCOMPARE(hours->data(hours->index(8), HourlyTripsModel::TripsRole).toInt(), 0);
}

void TripReportTest::listsTheBenchmarkRunsOfTheRange()
{
    TripReport report;
    load(report, kFirstDay.toString(Qt::ISODate), kLastDay.toString(Qt::ISODate));
    const QVariantList runs = report.benchmarkRuns();
    QCOMPARE(runs.size(), 1); // not the switch, not the run outside the range
    const QVariantMap run = runs.first().toMap();
    QCOMPARE(run.value(QStringLiteral("requests_per_s")).toDouble(), 1234.5);
    QCOMPARE(run.value(QStringLiteral("mode")).toString(), QStringLiteral("pool"));
    QCOMPARE(run.value(QStringLiteral("atMs")).toLongLong(), localMs(kFirstDay, 12, 0));
}

void TripReportTest::exportsQuotedCsv()
{
    TripReport report;
    load(report, kFirstDay.toString(Qt::ISODate), kLastDay.toString(Qt::ISODate));
    const QString base = m_dir.filePath(QStringLiteral("out/report")); // no suffix: .csv is added
    QVERIFY(QDir().mkpath(m_dir.filePath(QStringLiteral("out"))));
    QVERIFY2(report.exportCsv(QUrl::fromLocalFile(base)), qPrintable(report.error()));

    QFile tripsFile(base + QStringLiteral(".csv"));
    QVERIFY(tripsFile.open(QIODevice::ReadOnly));
    const QList<QByteArray> lines = tripsFile.readAll().split('\n');
    QCOMPARE(lines.size(), 1 + 4 + 1); // header, the range's trips, the final newline
    QVERIFY(lines.first().startsWith("booking_id,car_id,rider_id,started,ended,"));
    QVERIFY(lines.last().isEmpty());
    // Oldest first in the file; the awkward rider is quoted per RFC 4180.
    QVERIFY2(lines[2].startsWith("2,2,\"a \"\"quoted\"\", rider\","), lines[2].constData());
    QVERIFY2(lines[1].startsWith("1,1,r1,"), lines[1].constData());
    QVERIFY2(lines[2].contains(",99.50,SEK"), lines[2].constData());
    for (int i = 1; i <= 4; ++i)
        QVERIFY2(!lines[i].contains("before") && !lines[i].contains("after"), lines[i].constData());

    QFile hoursFile(TripReport::byHourPath(tripsFile.fileName()));
    QCOMPARE(hoursFile.fileName(), base + QStringLiteral("-by-hour.csv"));
    QVERIFY(hoursFile.open(QIODevice::ReadOnly));
    const QList<QByteArray> hourLines = hoursFile.readAll().trimmed().split('\n');
    QCOMPARE(hourLines.size(), 1 + 24 + 1);
    QCOMPARE(hourLines[0], QByteArray("hour,trips,revenue,average_fare"));
    QCOMPARE(hourLines[1 + 8], QByteArray("8,2,220.00,110.00"));
    QCOMPARE(hourLines.last(), QByteArray("total,4,550.00,137.50"));

    // An unwritable place is an error, not a silent nothing.
    QVERIFY(!report.exportCsv(QUrl::fromLocalFile(m_dir.filePath(QStringLiteral("missing-dir/x.csv")))));
    QVERIFY(!report.error().isEmpty());
}

void TripReportTest::aBackwardsRangeIsAnErrorNotATable()
{
    TripReport report;
    load(report, kLastDay.toString(Qt::ISODate), kFirstDay.toString(Qt::ISODate));
    QVERIFY(!report.error().isEmpty());
    QCOMPARE(report.tripCount(), 0);
    QCOMPARE(report.trips()->rowCount(), 0);
}

QTEST_GUILESS_MAIN(TripReportTest)
#include "console_trip_report_test.moc"
