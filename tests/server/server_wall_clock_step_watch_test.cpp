// clock::WallClockStepWatch tells a step of the wall clock (set by an operator, NTP correcting a
// wrong clock) from its ticking and slewing: the wall clock moved more than kStepMs against the
// monotonic clock since the last look, either way, reported once.

#include "region/WallClockStepWatch.h"

#include <QTest>

using taxicore::clock::WallClockStepWatch;

class WallClockStepWatchTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void theFirstLookIsNoStep();
    void tickingAndSlewingAreNoStep();
    void aStepEitherWayIsReportedOnce();
};

void WallClockStepWatchTest::theFirstLookIsNoStep()
{
    WallClockStepWatch watch;
    QVERIFY(!watch.stepped(1'700'000'000'000, 5'000));
}

void WallClockStepWatchTest::tickingAndSlewingAreNoStep()
{
    WallClockStepWatch watch;
    int64_t wall = 1'700'000'000'000, mono = 5'000;
    QVERIFY(!watch.stepped(wall, mono));
    // An hour of looks a second apart, the wall clock slewed 0.5 ms a second (NTP's most): 1.8 s in all.
    for (int i = 0; i < 3600; ++i) {
        mono += 1000;
        wall += 1000 + (i % 2);
        QVERIFY2(!watch.stepped(wall, mono), qPrintable(QString::number(i)));
    }
}

void WallClockStepWatchTest::aStepEitherWayIsReportedOnce()
{
    WallClockStepWatch watch;
    int64_t wall = 1'700'000'000'000, mono = 5'000;
    QVERIFY(!watch.stepped(wall, mono));
    wall += 1000 + 3'600'000; // a second later, and an hour forward
    mono += 1000;
    QVERIFY(watch.stepped(wall, mono));
    wall += 1000;
    mono += 1000;
    QVERIFY(!watch.stepped(wall, mono));
    wall += 1000 - WallClockStepWatch::kStepMs - 1; // back by just more than kStepMs
    mono += 1000;
    QVERIFY(watch.stepped(wall, mono));
    QVERIFY(!watch.stepped(wall, mono));
}

QTEST_GUILESS_MAIN(WallClockStepWatchTest)
#include "server_wall_clock_step_watch_test.moc"
