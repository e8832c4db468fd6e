// End to end, in a real window (Xvfb): trips written to a ledger through the Ledger API, then
// taxicore on that data directory opens the Reports panel (--panel reports) and takes its own
// screenshot; the by-hour chart must show bars. The PNG is kept in $TAXICORE_ARTIFACT_DIR.
// And a run of the benchmark panel lands in the ledger as a "benchmark" event.
#include "ledger/Ledger.h"
#include "ledger/LedgerReader.h"

#include "ConsoleProcessKit.h"

#include <QDateTime>
#include <QDeadlineTimer>
#include <QDir>
#include <QImage>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace taxicore::test;

namespace {
constexpr int kStartTimeoutMs = 20000;
constexpr int kScreenshotAfterMs = 5000; // start-up, the ledger read, the chart drawn
constexpr int kBenchmarkAfterMs = 10000; // start-up, the panel's 5 s benchmark, its result
constexpr int kExitTimeoutMs = 30000;
constexpr int kTrips = 12;
const QColor kBar(0x2f, 0x6f, 0xd6); // ReportsPanel.qml's bar colour

} // namespace

class ConsoleReportsScreenshotTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void reportsPanelChartsTodaysTrips();
    void benchmarkPanelRecordsItsRun();

private:
    // Runs taxicore in the Xvfb window on `dataDir` until it quits by itself.
    void runConsole(const QString &dataDir, const QStringList &extraArgs);
    QTemporaryDir m_config;
};

void ConsoleReportsScreenshotTest::runConsole(const QString &dataDir, const QStringList &extraArgs)
{
    QProcess console;
    auto cleanup = qScopeGuard([&console] {
        if (console.state() != QProcess::NotRunning) {
            console.kill();
            console.waitForFinished(kExitTimeoutMs);
        }
    });
    console.setProcessEnvironment(windowedEnvironment(m_config.path())); // default layout, no history
    console.start(consoleBinary(), QStringList{QStringLiteral("--host"), QStringLiteral("127.0.0.1"),
                                               QStringLiteral("--port"), QStringLiteral("0"), QStringLiteral("--cars"),
                                               QStringLiteral("50"), QStringLiteral("--data-dir"), dataDir}
                                       + extraArgs);
    QVERIFY2(console.waitForStarted(kStartTimeoutMs), qPrintable(console.errorString()));
    QVERIFY2(console.waitForFinished(kExitTimeoutMs), "taxicore did not quit by itself");
    QCOMPARE(console.exitStatus(), QProcess::NormalExit);
    QVERIFY2(console.exitCode() == 0, console.readAllStandardError().constData());
}

void ConsoleReportsScreenshotTest::reportsPanelChartsTodaysTrips()
{
    if (qEnvironmentVariableIsEmpty("DISPLAY"))
        QSKIP("needs an X display (run through xvfb-run, as ctest does)");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString data = dir.filePath(QStringLiteral("data"));
    {
        taxicore::LedgerOptions options;
        options.dataDir = data;
        auto opened = taxicore::Ledger::open(options);
        QVERIFY2(opened.ledger, qPrintable(opened.error));
        // Today's trips, in the last minutes (so "today", the panel's default range, holds them).
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        const qint64 midnight = QDate::currentDate().startOfDay().toMSecsSinceEpoch();
        for (int i = 1; i <= kTrips; ++i) {
            const qint64 ended = std::max(midnight + 1, now - i * 10'000);
            taxicore::BookingRecord booking;
            booking.bookingId = quint64(i);
            booking.carId = i;
            booking.riderId = QStringLiteral("shot-%1").arg(i);
            booking.createdMs = booking.atMs = ended - 1;
            QVERIFY(opened.ledger->appendAndWait(booking));
            taxicore::TripRecord trip;
            trip.bookingId = quint64(i);
            trip.carId = i;
            trip.riderId = booking.riderId;
            trip.startedMs = ended - 1;
            trip.endedMs = ended;
            trip.distanceM = 2000;
            trip.durationS = 300;
            trip.fare.total = 100 + i;
            QVERIFY(opened.ledger->appendAndWait(trip));
        }
    }

    const QString shot = artifactDir() + QStringLiteral("/console-reports.png");
    QFile::remove(shot);

    runConsole(data, {QStringLiteral("--panel"), QStringLiteral("reports"), QStringLiteral("--screenshot"), shot,
                      QStringLiteral("--quit-after-ms"), QString::number(kScreenshotAfterMs)});
    if (QTest::currentTestFailed())
        return;

    QImage image(shot);
    QVERIFY2(!image.isNull(), qPrintable(shot));
    image = image.convertToFormat(QImage::Format_RGB32);
    // The side panel is the right part of the window.
    const QRect panel(image.width() * 6 / 10, 40, image.width() * 4 / 10 - 1, image.height() - 41);
    const int bars = countNear(image, panel, kBar, 24);
    qInfo("screenshot %s: %d bar px", qPrintable(shot), bars);
    QVERIFY2(bars > 100, "the by-hour chart shows no bars");
}

void ConsoleReportsScreenshotTest::benchmarkPanelRecordsItsRun()
{
    if (qEnvironmentVariableIsEmpty("DISPLAY"))
        QSKIP("needs an X display (run through xvfb-run, as ctest does)");
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString data = dir.filePath(QStringLiteral("data"));
    const qint64 before = QDateTime::currentMSecsSinceEpoch();
    runConsole(data, {QStringLiteral("--benchmark"), QStringLiteral("/hello"), QStringLiteral("--quit-after-ms"),
                      QString::number(kBenchmarkAfterMs)});
    if (QTest::currentTestFailed())
        return;

    taxicore::LedgerOptions options;
    options.dataDir = data;
    const auto events = taxicore::LedgerReader(options).events(before, QDateTime::currentMSecsSinceEpoch() + 1);
    QVERIFY2(events.ok(), qPrintable(events.error));
    std::vector<taxicore::EventRecord> runs;
    for (const auto &e : events.value) {
        if (e.kind == QLatin1String("benchmark"))
            runs.push_back(e);
    }
    QCOMPARE(runs.size(), std::size_t(1));
    const QJsonObject detail = runs.front().detail;
    QCOMPARE(detail.value(QStringLiteral("mode")).toString(), QStringLiteral("single"));
    QVERIFY2(detail.value(QStringLiteral("url")).toString().endsWith(QLatin1String("/hello")),
             qPrintable(detail.value(QStringLiteral("url")).toString()));
    QCOMPARE(detail.value(QStringLiteral("concurrency")).toInt(), 64);
    QVERIFY(detail.value(QStringLiteral("responses")).toDouble() > 0);
    QVERIFY(detail.value(QStringLiteral("requests_per_s")).toDouble() > 0);
    QVERIFY(detail.value(QStringLiteral("p99_ms")).toDouble() > 0);
}

QTEST_GUILESS_MAIN(ConsoleReportsScreenshotTest)
#include "console_reports_screenshot_test.moc"
