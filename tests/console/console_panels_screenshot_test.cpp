// Every side panel in a real window (Xvfb, a 1920x1080 screen) at 1280x800 and at 1920x1080, for
// a person to look at (issue 19): the PNGs console-panel-<panel>-<size>.png are kept in
// $TAXICORE_ARTIFACT_DIR. The bookings run with generated demand, the Reports panel over a ledger
// with today's trips, the Benchmark panel after a run; each shot must have the window's size, and
// the finished benchmark must show its green outcome band.
#include "ledger/Ledger.h"

#include "ConsoleProcessKit.h"

#include <QDate>
#include <QDateTime>
#include <QImage>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

using namespace taxicore::test;

namespace {
constexpr int kStartTimeoutMs = 20000;
constexpr int kExitTimeoutMs = 40000;
constexpr int kQuitAfterMs = 7000;           // start-up, the map, a few chart samples
constexpr int kBenchmarkQuitAfterMs = 14000; // start-up, the panel's 5 s benchmark, its result
constexpr int kTrips = 8;
const QColor kFinished(0x2e, 0xa0, 0x4a); // BenchmarkOutcome.qml's "finished" tint

// Writes today's trips (in the last minutes) to a ledger in `dataDir`.
bool writeTrips(const QString &dataDir)
{
    taxicore::LedgerOptions options;
    options.dataDir = dataDir;
    auto opened = taxicore::Ledger::open(options);
    if (!opened.ledger)
        return false;
    const qint64 now = QDateTime::currentMSecsSinceEpoch();
    const qint64 midnight = QDate::currentDate().startOfDay().toMSecsSinceEpoch();
    for (int i = 1; i <= kTrips; ++i) {
        const qint64 ended = std::max(midnight + 1, now - i * 60'000);
        taxicore::BookingRecord booking;
        booking.bookingId = quint64(i);
        booking.carId = i;
        booking.riderId = QStringLiteral("rider-%1").arg(i);
        booking.createdMs = booking.atMs = ended - 1;
        taxicore::TripRecord trip;
        trip.bookingId = quint64(i);
        trip.carId = i;
        trip.riderId = booking.riderId;
        trip.startedMs = ended - 600'000;
        trip.endedMs = ended;
        trip.distanceM = 1500 + 400 * i;
        trip.durationS = 420 + 30 * i;
        trip.fare.total = 95 + 11.5 * i;
        trip.fare.currency = QStringLiteral("SEK");
        if (!opened.ledger->appendAndWait(booking) || !opened.ledger->appendAndWait(trip))
            return false;
    }
    return true;
}
} // namespace

class ConsolePanelsScreenshotTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void eachPanelAtEachSize_data();
    void eachPanelAtEachSize();
};

void ConsolePanelsScreenshotTest::eachPanelAtEachSize_data()
{
    QTest::addColumn<QString>("panel");
    QTest::addColumn<QSize>("size");
    for (const QSize size : {QSize(1280, 800), QSize(1920, 1080)}) {
        for (const char *panel : {"bookings", "server", "benchmark", "reports"})
            QTest::addRow("%s-%dx%d", panel, size.width(), size.height()) << QString::fromLatin1(panel) << size;
    }
}

void ConsolePanelsScreenshotTest::eachPanelAtEachSize()
{
    if (qEnvironmentVariableIsEmpty("DISPLAY"))
        QSKIP("needs an X display (run through xvfb-run, as ctest does)");
    QFETCH(QString, panel);
    QFETCH(QSize, size);

    const QString shot =
        artifactDir() + QStringLiteral("/console-panel-%1-%2x%3.png").arg(panel).arg(size.width()).arg(size.height());
    QFile::remove(shot);
    QTemporaryDir config;
    QTemporaryDir data;
    QVERIFY(config.isValid() && data.isValid());
    if (panel == QLatin1String("reports"))
        QVERIFY(writeTrips(data.path()));

    // -qwindowgeometry is Qt's own flag: the first window opens at that size.
    QStringList args{
        QStringLiteral("-qwindowgeometry"), QStringLiteral("%1x%2+0+0").arg(size.width()).arg(size.height()),
        QStringLiteral("--host"),           QStringLiteral("127.0.0.1"),
        QStringLiteral("--port"),           QStringLiteral("0"),
        QStringLiteral("--data-dir"),       data.path(),
        QStringLiteral("--panel"),          panel,
        QStringLiteral("--screenshot"),     shot};
    if (panel == QLatin1String("benchmark"))
        args << QStringLiteral("--benchmark") << QStringLiteral("/hello") << QStringLiteral("--quit-after-ms")
             << QString::number(kBenchmarkQuitAfterMs);
    else
        args << QStringLiteral("--demand-rate") << QStringLiteral("60") << QStringLiteral("--sim-speed")
             << QStringLiteral("8") << QStringLiteral("--quit-after-ms") << QString::number(kQuitAfterMs);

    QProcess console;
    auto cleanup = qScopeGuard([&console] {
        if (console.state() != QProcess::NotRunning) {
            console.kill();
            console.waitForFinished(kExitTimeoutMs);
        }
    });
    console.setProcessEnvironment(windowedEnvironment(config.path()));
    console.start(consoleBinary(), args);
    QVERIFY2(console.waitForStarted(kStartTimeoutMs), qPrintable(console.errorString()));
    QVERIFY2(console.waitForFinished(kStartTimeoutMs + kExitTimeoutMs), "taxicore did not quit by itself");
    QCOMPARE(console.exitStatus(), QProcess::NormalExit);
    QVERIFY2(console.exitCode() == 0, console.readAllStandardError().constData());
    const QString out = QString::fromUtf8(console.readAllStandardOutput());

    QImage image(shot);
    QVERIFY2(!image.isNull(), qPrintable(shot));
    QCOMPARE(image.size(), size);
    qInfo("screenshot %s", qPrintable(shot));

    if (panel == QLatin1String("benchmark")) {
        QVERIFY2(out.contains(QLatin1String("benchmark-results=1")), qPrintable(out));
        // The outcome band's border and headline in the side panel (the map's free cars share the
        // colour, so only the panel is counted).
        image = image.convertToFormat(QImage::Format_RGB32);
        const QRect side(image.width() * 7 / 10, 40, image.width() * 3 / 10 - 1, image.height() - 41);
        const int band = countNear(image, side, kFinished, 16);
        qInfo("%d finished-band px", band);
        QVERIFY2(band > 300, "the finished state is not shown");
    }
}

QTEST_GUILESS_MAIN(ConsolePanelsScreenshotTest)
#include "console_panels_screenshot_test.moc"
