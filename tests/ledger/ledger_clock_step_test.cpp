// The ledger's writer copies the WAL into the database every checkpointIntervalMs; with SQLite's
// own automatic checkpoints off, nothing else does until the WAL passes walResetBytes. That
// interval is a duration: on the old code it was a difference of wall-clock readings, so a step of
// the wall clock back an hour stopped the checkpoints for the hour and the WAL grew with every
// commit. This test process runs under libfaketime (ctest preloads it; tests/support/FakeClock.h)
// with its wall clock read from a file it steps itself.

#include "LedgerTestSupport.h"

#include "FakeClock.h"
#include "RequireTool.h"
#include "Wait.h"

#include <QDateTime>
#include <QFileInfo>
#include <QSemaphore>
#include <QTemporaryDir>
#include <QTest>

using namespace taxicore;
using namespace taxicore::test;
using namespace ledgertest;

namespace {

constexpr qint64 kStepBackS = 3600;
constexpr int kBookings = 20'000;
constexpr qint64 kBoundBytes = 8 * 1024 * 1024;

bool setOwnClockOffset(qint64 offsetS)
{
    return setWallClockOffset(qEnvironmentVariable("FAKETIME_TIMESTAMP_FILE"), offsetS);
}

} // namespace

class LedgerClockStepTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void checkpointsGoOnAfterTheClockStepsBack();
    void cleanupTestCase() { setOwnClockOffset(0); }
};

void LedgerClockStepTest::checkpointsGoOnAfterTheClockStepsBack()
{
    TC_REQUIRE_TOOL(fakeTimeAvailable() && qEnvironmentVariable("LD_PRELOAD").contains(fakeTimeLibrary())
                        && qEnvironmentVariableIsSet("FAKETIME_TIMESTAMP_FILE"),
                    "libfaketime is not installed (package faketime), or ctest did not preload it");
    QVERIFY(setOwnClockOffset(0));
    QTemporaryDir dir;
    LedgerOptions options = optionsFor(dir.path());
    options.checkpointIntervalMs = 20;
    options.walResetBytes = qint64(1) << 30; // only the interval's checkpoints keep the WAL small
    options.batchMaxRecords = 50;
    auto opened = Ledger::open(options);
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    const QString wal = opened.ledger->location() + QStringLiteral("-wal");
    // A few checkpoints on the unstepped clock first, so the writer has a last one to measure from.
    QSemaphore done;
    for (int id = 1; id <= 200; ++id)
        opened.ledger->append(booking(quint64(id)), [&](bool, const QString &) { done.release(); });
    QVERIFY(done.tryAcquire(200, 30'000));

    const qint64 before = QDateTime::currentMSecsSinceEpoch();
    QVERIFY(setOwnClockOffset(-kStepBackS));
    QVERIFY2(waitUntil([&] { return QDateTime::currentMSecsSinceEpoch() < before - kStepBackS * 500; }, 5000),
             "the wall clock did not step back: libfaketime is not in effect");

    qint64 largest = 0;
    for (int id = 201; id <= 200 + kBookings; ++id) {
        opened.ledger->append(booking(quint64(id)), [&](bool, const QString &) { done.release(); });
        if (id % 1000 == 0) { // a steady stream, not one burst
            QVERIFY(waitUntil([&] { return done.available() >= id - 200 - 2000; }, 60'000, 1));
            largest = std::max(largest, QFileInfo(wal).size());
        }
    }
    QVERIFY(done.tryAcquire(kBookings, 60'000));
    qInfo() << "largest WAL after the step:" << largest / 1024 << "KiB";
    QVERIFY2(largest < kBoundBytes, qPrintable(QStringLiteral("the WAL grew to %1 KiB after the clock stepped back: "
                                                              "no checkpoint ran")
                                                   .arg(largest / 1024)));
}

QTEST_GUILESS_MAIN(LedgerClockStepTest)
#include "ledger_clock_step_test.moc"
