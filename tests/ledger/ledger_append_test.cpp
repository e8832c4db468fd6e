// Appending: a callback reports a commit only once the row is durable for other connections;
// many appends share few transactions; records commit in order; states only move forward.
#include "LedgerTestSupport.h"
#include "ledger/LedgerErrors.h"
#include "Wait.h"

#include <QFileInfo>
#include <QSemaphore>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <array>
#include <atomic>

using namespace taxicore;
using namespace ledgertest;
using taxicore::test::waitUntil;

class LedgerAppendTest : public QObject {
    Q_OBJECT

private slots:
    void committedCallbackMeansVisibleToAnotherConnection();
    void manyAppendsShareFewTransactions();
    void callbacksRunInAppendOrder();
    void appendAndWaitBlocksUntilCommitted();
    void invalidRecordFailsAloneOthersCommit();
    void lateOlderTransitionNeverMovesBookingBack();
    void aCheckpointAfterTheWallClockSteppedBackIsKept();
    void aWaitingBookingsAgeIsCheckpointedAndOrdersItsCheckpoints();
    void aRowOnlyAMoveMadeIsNoBooking();
    void arrivalOlderThanAReassignKeepsTheNewCar();
    void aBookingNeverReplacesAnotherUnderItsId();
    void aKeyedBookingRefusedForItsIdLeavesTheKeyToItsBooking();
    void tripCompletesBookingAndKeepsFareBreakdown();
    void eventsRoundTrip();
    void closingCommitsEverythingQueued();
    void waitUntilIdleReturnsAfterEveryCallbackRan();
    void overloadFailsFastInsteadOfQueueingForever();
    void walStaysBoundedUnderSustainedWrites();
    void openChoosesTheBackendByUrl();
};

// The seam (ledger/Ledger.h): no URL or "sqlite:" is the embedded SQLite file; an unknown scheme is
// refused by name at open, not silently replaced by the default.
void LedgerAppendTest::openChoosesTheBackendByUrl()
{
    QTemporaryDir dir;
    LedgerOptions options = optionsFor(dir.path());
    options.url = QStringLiteral("sqlite:");
    auto sqlite = Ledger::open(options);
    QVERIFY2(sqlite.ledger, qPrintable(sqlite.error));
    QCOMPARE(sqlite.ledger->location(), ledgerFilePath(dir.path()));
    QVERIFY(sqlite.ledger->appendAndWait(booking(7)));
    sqlite.ledger.reset();

    options.url = QStringLiteral("mysql://taxi:s3cret@127.0.0.1:1/taxicore");
    const auto unknown = Ledger::open(options);
    QVERIFY(!unknown.ledger);
    QVERIFY2(unknown.error.contains(QStringLiteral("unknown ledger backend \"mysql\"")), qPrintable(unknown.error));
    QVERIFY(!unknown.error.contains(QStringLiteral("s3cret"))); // a URL may hold a password
}

void LedgerAppendTest::committedCallbackMeansVisibleToAnotherConnection()
{
    QTemporaryDir dir;
    auto opened = Ledger::open(optionsFor(dir.path()));
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    RawConnection raw(opened.ledger->location());

    std::atomic<qint64> seenAtCallback{-2};
    std::atomic<bool> wasCommitted{false};
    QSemaphore called;
    opened.ledger->append(booking(42), [&](bool committed, const QString &) {
        wasCommitted = committed;
        // Checked inside the callback: the row must already be there for a second connection.
        RawConnection other(QDir(dir.path()).filePath(QStringLiteral("ledger.sqlite")));
        seenAtCallback = other.scalar(QStringLiteral("SELECT count(*) FROM bookings WHERE id = 42"));
        called.release();
    });
    QVERIFY(called.tryAcquire(1, 10000));
    QVERIFY(wasCommitted);
    QCOMPARE(seenAtCallback.load(), 1);
    QCOMPARE(raw.scalar(QStringLiteral("SELECT count(*) FROM transitions WHERE booking_id = 42")), 1);
}

void LedgerAppendTest::manyAppendsShareFewTransactions()
{
    QTemporaryDir dir;
    auto opened = Ledger::open(optionsFor(dir.path()));
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    constexpr int kRecords = 5000;
    QSemaphore done;
    std::atomic<int> failures{0};
    for (int i = 1; i <= kRecords; ++i)
        opened.ledger->append(booking(quint64(i)), [&](bool committed, const QString &) {
            failures += committed ? 0 : 1;
            done.release();
        });
    QVERIFY(done.tryAcquire(kRecords, 60000));
    QCOMPARE(failures.load(), 0);
    const LedgerStats stats = opened.ledger->stats();
    QCOMPARE(stats.committed, quint64(kRecords));
    qInfo() << "transactions for" << kRecords << "appends:" << stats.transactions;
    QVERIFY2(stats.transactions <= quint64(kRecords / 10), "appends were not batched");
    RawConnection raw(opened.ledger->location());
    QCOMPARE(raw.scalar(QStringLiteral("SELECT count(*) FROM bookings")), kRecords);
}

void LedgerAppendTest::callbacksRunInAppendOrder()
{
    QTemporaryDir dir;
    auto opened = Ledger::open(optionsFor(dir.path()));
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    std::vector<quint64> order; // written on the writer thread only
    QSemaphore done;
    for (quint64 id = 1; id <= 2000; ++id)
        opened.ledger->append(booking(id), [&, id](bool, const QString &) {
            order.push_back(id);
            done.release();
        });
    QVERIFY(done.tryAcquire(2000, 60000));
    QVERIFY(std::is_sorted(order.begin(), order.end()));
    QCOMPARE(order.size(), std::size_t(2000));
}

void LedgerAppendTest::appendAndWaitBlocksUntilCommitted()
{
    QTemporaryDir dir;
    auto opened = Ledger::open(optionsFor(dir.path()));
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    QString error;
    QVERIFY2(opened.ledger->appendAndWait(booking(7), &error), qPrintable(error));
    RawConnection raw(opened.ledger->location());
    QCOMPARE(raw.scalar(QStringLiteral("SELECT count(*) FROM bookings WHERE id = 7")), 1);
}

void LedgerAppendTest::invalidRecordFailsAloneOthersCommit()
{
    QTemporaryDir dir;
    auto opened = Ledger::open(optionsFor(dir.path()));
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    QSemaphore done;
    std::atomic<int> committed{0};
    QString badError;
    for (quint64 id = 1; id <= 20; ++id) {
        BookingRecord b = booking(id);
        if (id == 10)
            b.state = QStringLiteral("teleported");
        opened.ledger->append(b, [&, id](bool ok, const QString &error) {
            committed += ok ? 1 : 0;
            if (id == 10)
                badError = error;
            done.release();
        });
    }
    QVERIFY(done.tryAcquire(20, 10000));
    QCOMPARE(committed.load(), 19);
    QVERIFY2(badError.contains(QLatin1StringView("teleported")), qPrintable(badError));
}

void LedgerAppendTest::lateOlderTransitionNeverMovesBookingBack()
{
    QTemporaryDir dir;
    auto opened = Ledger::open(optionsFor(dir.path()));
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    Ledger &ledger = *opened.ledger;
    // Another process's "arriving" commits before this process's booking row.
    QVERIFY(ledger.appendAndWait(TransitionRecord{5, QStringLiteral("arriving"), 9, 2000, {}}));
    QVERIFY(ledger.appendAndWait(booking(5, QStringLiteral("assigned"), 1000)));
    auto open = ledger.reader().openBookings();
    QVERIFY2(open.ok(), qPrintable(open.error));
    QCOMPARE(open.value.size(), std::size_t(1));
    QCOMPARE(open.value[0].state, QStringLiteral("arriving"));
    QCOMPARE(open.value[0].riderId, QStringLiteral("rider-5"));
    QCOMPARE(open.value[0].createdMs, 1000);
    QCOMPARE(open.value[0].atMs, 2000);
}

// A ride's checkpoints after the wall clock stepped back an hour: newer by the time on board, so
// kept (judged by the wall clock alone they were refused for the hour, and a crash then lost the
// ride's time and metres since: hostile review M2); a late one with less time on board is not.
void LedgerAppendTest::aCheckpointAfterTheWallClockSteppedBackIsKept()
{
    QTemporaryDir dir;
    auto opened = Ledger::open(optionsFor(dir.path()));
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    Ledger &ledger = *opened.ledger;
    constexpr qint64 kAt = 1'700'000'200'000;
    constexpr qint64 kHourMs = 3'600'000;
    QVERIFY(ledger.appendAndWait(booking(51, QStringLiteral("assigned"), kAt - 60'000)));
    QVERIFY(ledger.appendAndWait(TransitionRecord{51, QStringLiteral("on_trip"), 1, kAt - 30'000, {}}));
    QVERIFY(ledger.appendAndWait(ProgressRecord{51, {{57.700, 11.960}, std::nullopt, 100, 10, kAt}}));
    QVERIFY(ledger.appendAndWait(ProgressRecord{51, {{57.701, 11.961}, std::nullopt, 200, 20, kAt - kHourMs}}));
    QVERIFY(ledger.appendAndWait(ProgressRecord{51, {{57.600, 11.900}, std::nullopt, 150, 15, kAt + 1000}}));
    const auto open = ledger.reader().openBookings();
    QVERIFY2(open.ok(), qPrintable(open.error));
    QCOMPARE(open.value.size(), std::size_t(1));
    QVERIFY(open.value[0].progress);
    QCOMPARE(open.value[0].progress->tripElapsedS, 20.0);
    QCOMPARE(open.value[0].progress->tripDistanceM, 200.0);
    QCOMPARE(open.value[0].progress->carAt.lat, 57.701);
}

// A waiting booking's checkpoints carry its age on the monotonic clock (schema 6), read back for
// the restore, and are newer by it: one after the wall clock stepped back an hour is kept, a late
// one with a younger age is not.
void LedgerAppendTest::aWaitingBookingsAgeIsCheckpointedAndOrdersItsCheckpoints()
{
    QTemporaryDir dir;
    auto opened = Ledger::open(optionsFor(dir.path()));
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    Ledger &ledger = *opened.ledger;
    constexpr qint64 kAt = 1'700'000'200'000;
    constexpr qint64 kHourMs = 3'600'000;
    QVERIFY(ledger.appendAndWait(booking(52, QStringLiteral("assigned"), kAt - 60'000)));
    QVERIFY(ledger.appendAndWait(ProgressRecord{52, {{57.700, 11.960}, std::nullopt, 0, 0, kAt, 10.0}}));
    QVERIFY(ledger.appendAndWait(ProgressRecord{52, {{57.700, 11.960}, std::nullopt, 0, 0, kAt - kHourMs, 20.0}}));
    QVERIFY(ledger.appendAndWait(ProgressRecord{52, {{57.700, 11.960}, std::nullopt, 0, 0, kAt + 1000, 15.0}}));
    const auto open = ledger.reader().openBookings();
    QVERIFY2(open.ok(), qPrintable(open.error));
    QCOMPARE(open.value.size(), std::size_t(1));
    QVERIFY(open.value[0].progress && open.value[0].progress->waitedS);
    QCOMPARE(*open.value[0].progress->waitedS, 20.0);
    QCOMPARE(open.value[0].progress->atMs, kAt - kHourMs);
}

// A move committed for a booking whose own record never commits (its worker was killed before
// the commit; the primary's simulator recorded the car's arrival meanwhile): the row that move
// made is no booking. Restored, it would hold a car for a rider who never got a 201; read back,
// the primary would keep the dead worker's booking instead of withdrawing it.
void LedgerAppendTest::aRowOnlyAMoveMadeIsNoBooking()
{
    QTemporaryDir dir;
    auto opened = Ledger::open(optionsFor(dir.path()));
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    Ledger &ledger = *opened.ledger;
    QVERIFY(ledger.appendAndWait(TransitionRecord{8, QStringLiteral("arriving"), 9, 2000, {}}));
    auto open = ledger.reader().openBookings();
    QVERIFY2(open.ok(), qPrintable(open.error));
    QCOMPARE(open.value.size(), std::size_t(0));
    auto stored = ledger.reader().booking(8);
    QVERIFY2(stored.ok(), qPrintable(stored.error));
    QVERIFY(!stored.value.has_value());

    // Its booking's record, late, makes it one.
    QVERIFY(ledger.appendAndWait(booking(8, QStringLiteral("assigned"), 1000)));
    open = ledger.reader().openBookings();
    QCOMPARE(open.value.size(), std::size_t(1));
    stored = ledger.reader().booking(8);
    QVERIFY(stored.value.has_value());
    QCOMPARE(stored.value->booking.state, QStringLiteral("arriving"));
}

// The simulator records an arrival on its own thread; an operator's reassign on another may
// commit first. The late arrival of the replaced car must not give the booking back to it.
void LedgerAppendTest::arrivalOlderThanAReassignKeepsTheNewCar()
{
    QTemporaryDir dir;
    auto opened = Ledger::open(optionsFor(dir.path()));
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    Ledger &ledger = *opened.ledger;
    BookingRecord created = booking(6, QStringLiteral("assigned"), 1000);
    created.carId = 7;
    QVERIFY(ledger.appendAndWait(created));
    QVERIFY(ledger.appendAndWait(TransitionRecord{6, QStringLiteral("assigned"), 42, 3000, {}}));
    QVERIFY(ledger.appendAndWait(TransitionRecord{6, QStringLiteral("arriving"), 7, 2000, {}}));
    auto open = ledger.reader().openBookings();
    QVERIFY2(open.ok(), qPrintable(open.error));
    QCOMPARE(open.value.size(), std::size_t(1));
    QCOMPARE(open.value[0].state, QStringLiteral("assigned"));
    QCOMPARE(open.value[0].carId, 42);

    // The new car's own arrival, later than the reassign, applies.
    QVERIFY(ledger.appendAndWait(TransitionRecord{6, QStringLiteral("arriving"), 42, 4000, {}}));
    open = ledger.reader().openBookings();
    QVERIFY2(open.ok(), qPrintable(open.error));
    QCOMPARE(open.value[0].state, QStringLiteral("arriving"));
    QCOMPARE(open.value[0].carId, 42);
}

// An id handed out twice (two servers on one data directory, or any other way): the second
// booking under it is refused (booking_id_taken) and nothing of it is written; the first, which
// its rider was told about, stays. The same booking written again is still accepted, and a record
// refused in a batch leaves the others of the batch to commit. Before, the create was an upsert
// and the second booking replaced the first whenever its created_ms differed.
void LedgerAppendTest::aBookingNeverReplacesAnotherUnderItsId()
{
    QTemporaryDir dir;
    auto opened = Ledger::open(optionsFor(dir.path()));
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    Ledger &ledger = *opened.ledger;
    const BookingRecord first = booking(21, QStringLiteral("assigned"), 1000);
    QVERIFY(ledger.appendAndWait(first));
    QVERIFY(ledger.appendAndWait(first)); // the same booking again

    BookingRecord later = booking(21, QStringLiteral("assigned"), 1005); // another rider, a moment later
    later.riderId = QStringLiteral("rider-other");
    later.carId = 2;
    BookingRecord sameMs = booking(21, QStringLiteral("assigned"), 1000); // the same ms, another token
    sameMs.carId = 3;
    sameMs.riderTokenHash = QByteArray::fromHex("0102030405060708");
    BookingRecord sameRiderLater = booking(21, QStringLiteral("on_trip"), 1009); // another creation time
    QSemaphore done;
    QStringList errors(4);
    std::array<bool, 4> committed{};
    const BookingRecord records[] = {later, booking(22, QStringLiteral("assigned"), 1001), sameMs, sameRiderLater};
    for (int i = 0; i < 4; ++i)
        ledger.append(records[i], [&, i](bool ok, const QString &error) {
            committed[std::size_t(i)] = ok;
            errors[i] = error;
            done.release();
        });
    QVERIFY(done.tryAcquire(4, 10000));
    for (int i : {0, 2, 3}) {
        QVERIFY2(!committed[std::size_t(i)], qPrintable(QString::number(i)));
        QVERIFY2(errors[i].startsWith(QLatin1String(kLedgerBookingIdTaken)), qPrintable(errors[i]));
        QVERIFY2(isLedgerRefusal(errors[i]), qPrintable(errors[i]));
    }
    QCOMPARE(errors[0], QStringLiteral("booking_id_taken: booking 21 is another booking already"));
    QVERIFY2(committed[1], qPrintable(errors[1])); // in the same batch: written

    const auto stored = ledger.reader().booking(21);
    QVERIFY2(stored.ok() && stored.value, qPrintable(stored.error));
    QCOMPARE(stored.value->booking.riderId, QStringLiteral("rider-21"));
    QCOMPARE(stored.value->booking.createdMs, 1000);
    QCOMPARE(stored.value->booking.carId, first.carId);
    QCOMPARE(stored.value->booking.state, QStringLiteral("assigned"));
    RawConnection raw(ledgerFilePath(dir.path()));
    QCOMPARE(raw.scalar(QStringLiteral("SELECT count(*) FROM transitions WHERE booking_id = 21")), 2);
    QCOMPARE(raw.scalar(QStringLiteral("SELECT rider_token_hash IS NULL FROM bookings WHERE id = 21")), 1);
    QVERIFY(ledger.reader().booking(22).value.has_value());
}

// A keyed booking X; a booking under X's id and key but made later (an id handed out twice): the
// ledger refuses it for the id before claiming the key, so the key still names X.
void LedgerAppendTest::aKeyedBookingRefusedForItsIdLeavesTheKeyToItsBooking()
{
    QTemporaryDir dir;
    auto opened = Ledger::open(optionsFor(dir.path()));
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    Ledger &ledger = *opened.ledger;
    BookingRecord first = booking(31, QStringLiteral("assigned"), 1000);
    first.riderTokenHash = QByteArray::fromHex("a1a2a3a4a5a6a7a8a9aaabacadaeafb0");
    first.keyed = true;
    QVERIFY(ledger.appendAndWait(first));
    BookingRecord retry = booking(31, QStringLiteral("assigned"), 1007);
    retry.carId = 6;
    retry.riderTokenHash = first.riderTokenHash;
    retry.keyed = true;
    QString error;
    QVERIFY(!ledger.appendAndWait(retry, &error));
    QVERIFY2(error.startsWith(QLatin1String(kLedgerBookingIdTaken)), qPrintable(error));
    const auto stored = ledger.reader().bookingByKey(first.riderTokenHash);
    QVERIFY2(stored.ok() && stored.value, qPrintable(stored.error));
    QCOMPARE(stored.value->booking.createdMs, 1000);
    QCOMPARE(stored.value->booking.carId, first.carId);
}

void LedgerAppendTest::tripCompletesBookingAndKeepsFareBreakdown()
{
    QTemporaryDir dir;
    auto opened = Ledger::open(optionsFor(dir.path()));
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    Ledger &ledger = *opened.ledger;
    QVERIFY(ledger.appendAndWait(booking(3)));
    QVERIFY(ledger.appendAndWait(
        TransitionRecord{3, QStringLiteral("on_trip"), 0, 1'700'000'100'000, LedgerPoint{57.71, 11.95}}));
    TripRecord t = trip(3, 1'700'000'700'000, 140.5);
    t.fare.surge = 1.2;
    QVERIFY(ledger.appendAndWait(t));
    QVERIFY(ledger.reader().openBookings().value.empty());
    auto trips = ledger.reader().trips(0, std::numeric_limits<qint64>::max(), 100);
    QVERIFY2(trips.ok(), qPrintable(trips.error));
    QCOMPARE(trips.value.size(), std::size_t(1));
    QCOMPARE(trips.value[0].fare.total, 140.5);
    QCOMPARE(trips.value[0].fare.surge, 1.2);
    QCOMPARE(trips.value[0].fare.distanceCharge, 40.5);
    RawConnection raw(ledger.location());
    QCOMPARE(raw.scalar(QStringLiteral("SELECT count(*) FROM transitions WHERE booking_id = 3")), 3);
    QCOMPARE(raw.scalar(QStringLiteral("SELECT car_id FROM bookings WHERE id = 3")), 4);
    QCOMPARE(raw.scalar(QStringLiteral("SELECT dropoff_lat IS NOT NULL FROM bookings WHERE id = 3")), 1);
}

void LedgerAppendTest::eventsRoundTrip()
{
    QTemporaryDir dir;
    auto opened = Ledger::open(optionsFor(dir.path()));
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    const QJsonObject detail{{QStringLiteral("from"), QStringLiteral("single")},
                             {QStringLiteral("to"), QStringLiteral("processes")}};
    QVERIFY(opened.ledger->appendAndWait(EventRecord{QStringLiteral("mode_switch"), detail, 500}));
    auto events = opened.ledger->reader().events(0, 1000);
    QVERIFY2(events.ok(), qPrintable(events.error));
    QCOMPARE(events.value.size(), std::size_t(1));
    QCOMPARE(events.value[0].kind, QStringLiteral("mode_switch"));
    QCOMPARE(events.value[0].detail, detail);
}

void LedgerAppendTest::closingCommitsEverythingQueued()
{
    QTemporaryDir dir;
    std::atomic<int> committed{0};
    {
        auto opened = Ledger::open(optionsFor(dir.path()));
        QVERIFY2(opened.ledger, qPrintable(opened.error));
        for (quint64 id = 1; id <= 3000; ++id)
            opened.ledger->append(booking(id), [&](bool ok, const QString &) { committed += ok; });
    }
    QCOMPARE(committed.load(), 3000);
    RawConnection raw(QDir(dir.path()).filePath(QStringLiteral("ledger.sqlite")));
    QCOMPARE(raw.scalar(QStringLiteral("SELECT count(*) FROM bookings")), 3000);
}

// What a server does before tearing down what its callbacks use (issue 15 item 9): once
// waitUntilIdle returns true, every callback of what was appended before has run and returned.
void LedgerAppendTest::waitUntilIdleReturnsAfterEveryCallbackRan()
{
    QTemporaryDir dir;
    auto opened = Ledger::open(optionsFor(dir.path()));
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    std::atomic<int> finished{0};
    constexpr int kRecords = 500;
    for (quint64 id = 1; id <= kRecords; ++id)
        opened.ledger->append(booking(id), [&](bool, const QString &) {
            if (finished.load() % 100 == 0)
                QThread::msleep(20); // a slow callback: the wait must cover it too
            ++finished;
        });
    QVERIFY(opened.ledger->waitUntilIdle(60000));
    QCOMPARE(finished.load(), kRecords);
    QVERIFY(opened.ledger->waitUntilIdle(0)); // nothing pending: at once
}

void LedgerAppendTest::overloadFailsFastInsteadOfQueueingForever()
{
    QTemporaryDir dir;
    LedgerOptions options = optionsFor(dir.path());
    options.maxQueuedRecords = 10;
    auto opened = Ledger::open(options);
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    std::atomic<int> refused{0};
    QString why;
    QSemaphore done;
    for (quint64 id = 1; id <= 5000; ++id)
        opened.ledger->append(booking(id), [&, id](bool ok, const QString &error) {
            if (!ok && refused++ == 0)
                why = error; // the first refusal runs on this thread, before the next append
            done.release();
        });
    QVERIFY(done.tryAcquire(5000, 60000));
    QVERIFY(refused > 0);
    QVERIFY2(why.contains(QLatin1StringView("overloaded")), qPrintable(why));
    const LedgerStats stats = opened.ledger->stats();
    QCOMPARE(stats.committed + stats.failed, quint64(5000));
}

void LedgerAppendTest::walStaysBoundedUnderSustainedWrites()
{
    QTemporaryDir dir;
    LedgerOptions options = optionsFor(dir.path());
    options.checkpointIntervalMs = 20;
    options.walResetBytes = 1 << 20;
    options.batchMaxRecords = 50;
    auto opened = Ledger::open(options);
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    const QString wal = opened.ledger->location() + QStringLiteral("-wal");
    constexpr int kBookings = 30000;
    QSemaphore done;
    qint64 largest = 0;
    for (int id = 1; id <= kBookings; ++id) {
        opened.ledger->append(booking(quint64(id)), [&](bool, const QString &) { done.release(); });
        if (id % 1000 == 0) { // a steady stream, not one burst
            QVERIFY(waitUntil([&] { return done.available() >= id - 2000; }, 60'000, 1));
            largest = std::max(largest, QFileInfo(wal).size());
        }
    }
    QVERIFY(done.tryAcquire(kBookings, 60000));
    qInfo() << "largest WAL seen:" << largest / 1024 << "KiB";
    QVERIFY2(largest < 8 * 1024 * 1024, "the WAL kept growing");
    QCOMPARE(opened.ledger->stats().committed, quint64(kBookings));
}

QTEST_GUILESS_MAIN(LedgerAppendTest)
#include "ledger_append_test.moc"
