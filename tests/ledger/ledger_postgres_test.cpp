// The PostgreSQL ledger against a real PostgreSQL (PostgresKit): every record kind round-trips,
// group commit, the booking compare-and-swap between two ledgers (two nodes), claims released by
// ending moves and moved by reassigns, no deadlock between two nodes' commits, moves of an ended booking refused, an
// unavailable database reported within the timeouts and reconnected by itself, concurrent schema creation, node slots,
// a commit's cost not growing with the bookings table nor with the open bookings, a group commit as one set-based
// statement deciding each record alone (schema 4), the migration of a version 3 database, a lost commit
// settled by its mark while the records queued behind it are refused at once.
#include "LedgerTestSupport.h"
#include "PostgresKit.h"
#include "RequireTool.h"
#include "Wait.h"

#include "ledger/LedgerErrors.h"
#include "ledger/PostgresBatchWriter.h"
#include "ledger/PostgresCommitOutcome.h"
#include "ledger/PostgresSchema.h"

#include <QElapsedTimer>
#include <QTest>
#include <algorithm>
#include <atomic>
#include <future>
#include <mutex>
#include <thread>

using namespace taxicore;
using namespace ledgertest;
using taxicore::test::waitUntil;

namespace {

constexpr int kConnectTimeoutMs = 1000;
constexpr int kStatementTimeoutMs = 2000;

// A verdict delivered to append()'s callback.
struct Verdict {
    bool committed = false;
    QString error;
};

std::future<Verdict> appendAsync(Ledger &ledger, LedgerRecord record)
{
    auto promise = std::make_shared<std::promise<Verdict>>();
    auto future = promise->get_future();
    ledger.append(std::move(record), [promise](bool committed, const QString &error) {
        promise->set_value({committed, error});
    });
    return future;
}

Verdict appendNow(Ledger &ledger, LedgerRecord record)
{
    auto future = appendAsync(ledger, std::move(record));
    if (future.wait_for(std::chrono::seconds(30)) != std::future_status::ready)
        return {false, QStringLiteral("no verdict within 30 s")};
    return future.get();
}

BookingRecord bookingOfCar(quint64 id, int car)
{
    BookingRecord b = booking(id);
    b.carId = car;
    return b;
}

TransitionRecord move(quint64 id, const QString &state, int car, qint64 atMs = 1'700'000'100'000)
{
    TransitionRecord t;
    t.bookingId = id;
    t.state = state;
    t.carId = car;
    t.atMs = atMs;
    return t;
}

} // namespace

class LedgerPostgresTest : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void everyRecordKindRoundTrips();
    void manyAppendsShareFewTransactions();
    void twoNodesBookingOneCarOneWins();
    void commitsTouchingTheSameCarsInOppositeOrderDoNotDeadlock();
    void commitsDoNotReadTheWholeBookingsTable();
    void commitsDoNotReadEveryOpenBooking();
    void endingMovesReleaseTheCar();
    void reassignClaimsTheNewCarAndReleasesTheOld();
    void movesOfAnEndedBookingAreRefused();
    void aRowOnlyAMoveMadeIsNoBooking();
    void aReassignOfABookingNeverRecordedTakesNoCar();
    void aRideUnderWayIsNeitherCancelledNorExpiredNorReassigned();
    void aBookingNeverReplacesAnotherUnderItsId();
    void aKeyedBookingRefusedForItsIdLeavesTheKeyToItsBooking();
    void oneBatchDecidesEachRecordAsInAppendOrder();
    void aGroupCommitCallsNoFunctionPerRecord();
    void aVersion3DatabaseIsMigrated();
    void nodeSlotsGiveEachNodeItsOwnIdRange();
    void threeNodesCreateTheSchemaAtOnce();
    void openFailsNamingTheDatabaseNotThePassword();
    void unavailableDatabaseFailsFastThenReconnects();
    void aRestartedDatabaseTakesTheNextBookingAtOnce();
    void aNodeKeepsItsSlotAcrossARestart();
    void aBatchWhoseAnswerWasLostIsSettledByItsMark();
    void eachBatchLeavesAMarkThatIsForgottenOnceSettled();
    void recordsQueuedWhileACommitIsSettledAreAllRefusedAtOnce();
    void aCheckpointAfterTheWallClockSteppedBackIsKept();
    void aWaitingBookingsAgeIsCheckpointedAndOrdersItsCheckpoints();

private:
    LedgerOptions options(bool claimNodeSlot = false) const;
    std::unique_ptr<Ledger> openLedger(bool claimNodeSlot = false);
    qint64 count(const QString &sql);

    PostgresKit m_pg;
};

void LedgerPostgresTest::initTestCase()
{
    TC_REQUIRE_TOOL(!PostgresKit::binDir().isEmpty(), "PostgreSQL (initdb, postgres) is not installed");
    QVERIFY2(m_pg.start(), qPrintable(m_pg.error()));
    auto first = openLedger(); // the schema
    QVERIFY(first);
}

void LedgerPostgresTest::init()
{
    if (m_pg.running())
        m_pg.psql(QStringLiteral("TRUNCATE bookings, transitions, trips, events, cars"));
}

LedgerOptions LedgerPostgresTest::options(bool claimNodeSlot) const
{
    LedgerOptions o;
    o.url = m_pg.url();
    o.connectTimeoutMs = kConnectTimeoutMs;
    o.statementTimeoutMs = kStatementTimeoutMs;
    o.claimNodeSlot = claimNodeSlot;
    return o;
}

std::unique_ptr<Ledger> LedgerPostgresTest::openLedger(bool claimNodeSlot)
{
    auto opened = Ledger::open(options(claimNodeSlot));
    if (!opened.ledger)
        qWarning("%s", qPrintable(opened.error));
    return std::move(opened.ledger);
}

qint64 LedgerPostgresTest::count(const QString &sql)
{
    const QString out = m_pg.psql(sql);
    return out.isEmpty() ? -1 : out.toLongLong();
}

void LedgerPostgresTest::everyRecordKindRoundTrips()
{
    auto ledger = openLedger();
    QVERIFY(ledger);
    BookingRecord b = booking(41);
    b.dropoff = LedgerPoint{57.71, 11.95};
    b.riderTokenHash = QByteArray::fromHex("00ff10a0");
    b.surge = 1.5;
    b.quote = LedgerQuote{{40, 30.25, 12.5, 95, 1.5, 123.375, QStringLiteral("SEK")}, 4200.5, 610.25};
    QVERIFY(ledger->appendAndWait(b));
    QVERIFY(ledger->appendAndWait(booking(42)));
    QVERIFY(ledger->appendAndWait(move(41, QStringLiteral("arriving"), b.carId)));
    QVERIFY(ledger->appendAndWait(
        ProgressRecord{41, {{57.705, 11.965}, LedgerPoint{57.71, 11.95}, 0, 0, 1'700'000'200'000}}));
    QVERIFY(
        ledger->appendAndWait(ProgressRecord{41, {{1, 1}, std::nullopt, 0, 0, 1'700'000'100'000}})); // older: ignored
    QVERIFY(ledger->appendAndWait(EventRecord{
        QStringLiteral("mode_switch"), {{QStringLiteral("to"), QStringLiteral("pool")}}, 1'700'000'000'500}));
    QVERIFY(ledger->appendAndWait(trip(42, 1'700'000'900'000, 187.25)));

    const auto open = ledger->reader().openBookings();
    QVERIFY2(open.ok(), qPrintable(open.error));
    QCOMPARE(open.value.size(), std::size_t(1));
    const BookingRecord &got = open.value.front();
    QCOMPARE(got.bookingId, quint64(41));
    QCOMPARE(got.state, QStringLiteral("arriving"));
    QCOMPARE(got.carId, b.carId);
    QCOMPARE(got.riderId, b.riderId);
    QCOMPARE(got.pickup.lat, b.pickup.lat);
    QCOMPARE(got.dropoff->lng, 11.95);
    QCOMPARE(got.riderTokenHash, b.riderTokenHash);
    QCOMPARE(*got.surge, 1.5);
    QCOMPARE(got.quote->fare.total, 123.375);
    QCOMPARE(got.quote->distanceM, 4200.5);
    QCOMPARE(got.atMs, qint64(1'700'000'100'000));
    QVERIFY(got.progress);
    QCOMPARE(got.progress->carAt.lat, 57.705);
    QCOMPARE(got.progress->atMs, qint64(1'700'000'200'000));

    const auto ended = ledger->reader().booking(42);
    QVERIFY2(ended.ok(), qPrintable(ended.error));
    QCOMPARE(ended.value->booking.state, QStringLiteral("completed"));
    QCOMPARE(ended.value->trip->fare.total, 187.25);
    QCOMPARE(ended.value->trip->fare.currency, QStringLiteral("SEK"));
    QVERIFY(!ledger->reader().booking(99).value);

    const auto trips = ledger->reader().trips(0, 2'000'000'000'000, 100);
    QCOMPARE(trips.value.size(), std::size_t(1));
    QCOMPARE(trips.value.front().fare.distanceCharge, 40.5);
    QCOMPARE(ledger->reader().trips(0, 2'000'000'000'000, 0).value.size(), std::size_t(0)); // at most `limit`
    const auto report = ledger->reader().report(0, 2'000'000'000'000);
    QCOMPARE(report.value.trips, 1);
    QCOMPARE(report.value.revenue, 187.25);
    const auto events = ledger->reader().events(0, 2'000'000'000'000);
    QCOMPARE(events.value.size(), std::size_t(1));
    QCOMPARE(events.value.front().detail.value(QStringLiteral("to")).toString(), QStringLiteral("pool"));
    QCOMPARE(ledger->reader().maxBookingId().value, quint64(42));
    // The completed trip recorded its transition too, and released its car.
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM transitions WHERE booking_id = 42 AND state = 'completed'")),
             1);
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM cars WHERE booking_id = 42")), 0);
    QCOMPARE(count(QStringLiteral("SELECT booking_id FROM cars WHERE id = %1").arg(b.carId)), 41);
}

void LedgerPostgresTest::manyAppendsShareFewTransactions()
{
    auto ledger = openLedger();
    QVERIFY(ledger);
    constexpr int kRecords = 2000;
    std::atomic<int> committed{0};
    for (int i = 1; i <= kRecords; ++i)
        ledger->append(bookingOfCar(quint64(1000 + i), i), [&](bool ok, const QString &) { committed += ok; });
    QVERIFY(ledger->waitUntilIdle(30000));
    QCOMPARE(committed.load(), kRecords);
    const LedgerStats stats = ledger->stats();
    QCOMPARE(stats.committed, quint64(kRecords));
    QVERIFY2(stats.transactions < quint64(kRecords / 10), qPrintable(QString::number(stats.transactions)));
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM bookings")), kRecords);
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM cars WHERE booking_id IS NOT NULL")), kRecords);
}

// Two nodes book the same cars at the same moment: for each car exactly one booking commits, the
// other is refused with car_taken and leaves nothing behind. Other records of the loser's batch
// still commit.
void LedgerPostgresTest::twoNodesBookingOneCarOneWins()
{
    auto a = openLedger();
    auto b = openLedger();
    QVERIFY(a && b);
    constexpr int kCars = 50;
    std::vector<std::future<Verdict>> fromA, fromB, others;
    for (int car = 1; car <= kCars; ++car) {
        fromA.push_back(appendAsync(*a, bookingOfCar(quint64(car), car)));
        fromB.push_back(appendAsync(*b, bookingOfCar(quint64(10'000 + car), car)));
        others.push_back(appendAsync(*b, bookingOfCar(quint64(20'000 + car), 1000 + car)));
    }
    int winsA = 0;
    for (int i = 0; i < kCars; ++i) {
        const Verdict va = fromA[std::size_t(i)].get();
        const Verdict vb = fromB[std::size_t(i)].get();
        QVERIFY2(va.committed != vb.committed, qPrintable(va.error + QStringLiteral(" / ") + vb.error));
        const Verdict &lost = va.committed ? vb : va;
        QVERIFY2(lost.error.startsWith(QLatin1String(kLedgerCarTaken)), qPrintable(lost.error));
        QVERIFY2(lost.error.contains(QStringLiteral("car %1").arg(i + 1)), qPrintable(lost.error));
        winsA += va.committed;
        QVERIFY(others[std::size_t(i)].get().committed);
    }
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM bookings WHERE car_id <= %1").arg(kCars)), kCars);
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM transitions WHERE car_id <= %1").arg(kCars)), kCars);
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM bookings b JOIN cars c ON c.booking_id = b.id"
                                  " WHERE c.id = b.car_id AND b.car_id <= %1")
                       .arg(kCars)),
             kCars);
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM bookings WHERE id > 20000")), kCars);
    qInfo("node A won %d of %d cars", winsA, kCars);
}

// Two nodes' group commits claim and free the same cars, one in ascending and one in descending
// order. Row by row they would deadlock (PostgreSQL then waits deadlock_timeout, 1 s, aborts one
// and the batch is replayed record by record); each commit locks its rows in one order first.
void LedgerPostgresTest::commitsTouchingTheSameCarsInOppositeOrderDoNotDeadlock()
{
    const auto deadlocks = [this] {
        return count(QStringLiteral("SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"));
    };
    const qint64 before = deadlocks();
    QVERIFY(before >= 0);
    {
        auto a = openLedger();
        auto b = openLedger();
        QVERIFY(a && b);
        constexpr int kCars = 40;
        constexpr int kRounds = 6;
        for (int round = 0; round < kRounds; ++round) {
            const quint64 base = quint64(100'000 + round * 1000);
            std::vector<std::future<Verdict>> fromA, fromB;
            for (int i = 1; i <= kCars; ++i) {
                fromA.push_back(appendAsync(*a, bookingOfCar(base + quint64(i), i)));
                fromB.push_back(appendAsync(*b, bookingOfCar(base + 500 + quint64(i), kCars + 1 - i)));
            }
            std::vector<std::future<Verdict>> cancels;
            for (int i = 0; i < kCars; ++i) {
                const Verdict va = fromA[std::size_t(i)].get();
                const Verdict vb = fromB[std::size_t(kCars - 1 - i)].get(); // the same car
                QVERIFY2(va.committed != vb.committed, qPrintable(va.error + QStringLiteral(" / ") + vb.error));
                const quint64 winner = va.committed ? base + quint64(i + 1) : base + 500 + quint64(kCars - i);
                Ledger &other = va.committed ? *b : *a; // ended through the other node, in its order
                cancels.push_back(appendAsync(other, move(winner, QStringLiteral("cancelled"), i + 1)));
            }
            for (auto &cancel : cancels)
                QVERIFY(cancel.get().committed);
            QCOMPARE(count(QStringLiteral("SELECT count(*) FROM cars WHERE booking_id IS NOT NULL")), 0);
        }
    }
    // Closed: each backend reports its statistics as it exits, a moment later.
    const bool deadlocked = waitUntil([&] { return deadlocks() != before; }, 1500);
    QVERIFY2(!deadlocked, qPrintable(QStringLiteral("%1 deadlock(s) detected").arg(deadlocks() - before)));
}

// A commit's cost must not grow with the history. While the statistics say `bookings` is small
// (it was ANALYZEd young, as autovacuum does), a sequential scan looks cheapest to the batch lock;
// the session keeps that plan, and until the next ANALYZE each commit reads every booking. Counted
// with the server's statistics: rows of `bookings` read by sequential scans while one ledger
// commits one record at a time.
void LedgerPostgresTest::commitsDoNotReadTheWholeBookingsTable()
{
    constexpr int kYoung = 300;
    constexpr int kHistory = 5000;
    constexpr int kCommits = 20;
    const auto stat = [this](const char *column) {
        return count(
            QStringLiteral("SELECT %1 FROM pg_stat_user_tables WHERE relname = 'bookings'").arg(QLatin1String(column)));
    };
    const auto history = [this](int first, int rows) {
        return !m_pg.psql(QStringLiteral("INSERT INTO bookings (id, state, state_rank) SELECT g, 'completed', 4"
                                         " FROM generate_series(%1, %2) g")
                              .arg(first)
                              .arg(first + rows - 1))
                    .isNull();
    };
    auto ledger = openLedger();
    QVERIFY(ledger);
    QVERIFY(history(1'000'000, kYoung));
    QVERIFY(!m_pg.psql(QStringLiteral("ANALYZE bookings")).isNull());
    for (int i = 1; i <= 8; ++i) // the session plans its statements now, on a young table
        QVERIFY(appendNow(*ledger, bookingOfCar(quint64(i), i)).committed);
    QVERIFY(history(2'000'000, kHistory));
    const qint64 readBefore = stat("seq_tup_read");
    const qint64 probesBefore = stat("coalesce(idx_scan, 0)");
    QVERIFY(readBefore >= 0 && probesBefore >= 0);
    for (int i = 1; i <= kCommits; ++i)
        QVERIFY(appendNow(*ledger, move(quint64(i % 8 + 1), QStringLiteral("arriving"), i % 8 + 1)).committed);
    ledger.reset(); // the backend reports its statistics as it exits, a moment later
    QVERIFY(waitUntil([&] { return stat("coalesce(idx_scan, 0)") > probesBefore; }, 5000));
    const qint64 read = stat("seq_tup_read") - readBefore;
    QVERIFY2(read < kHistory, qPrintable(QStringLiteral("%1 commits read %2 bookings rows by sequential scans "
                                                        "(the table holds %3)")
                                             .arg(kCommits)
                                             .arg(read)
                                             .arg(kYoung + kHistory + 8)));
}

// The same trap with the open bookings: a lookup of a booking joined with a filter on state_rank
// could use the partial index bookings_open (small when the table was analyzed) and read every
// open booking once per record. Counted as the rows read through that index while one ledger
// books again cars whose bookings exist, among many open bookings.
void LedgerPostgresTest::commitsDoNotReadEveryOpenBooking()
{
    constexpr int kOpen = 5000;
    constexpr int kCommits = 20;
    const auto readThroughOpen = [this] {
        return count(QStringLiteral("SELECT coalesce(idx_tup_read, 0) FROM pg_stat_user_indexes"
                                    " WHERE indexrelname = 'bookings_open'"));
    };
    auto ledger = openLedger();
    QVERIFY(ledger);
    QVERIFY(!m_pg.psql(QStringLiteral("INSERT INTO bookings (id, state, state_rank) SELECT g, 'completed', 4"
                                      " FROM generate_series(1000000, 1002999) g; ANALYZE bookings"))
                 .isNull());     // analyzed with no open booking
    for (int i = 1; i <= 8; ++i) // the session plans its statements now
        QVERIFY(appendNow(*ledger, bookingOfCar(quint64(i), i)).committed);
    QVERIFY(!m_pg.psql(QStringLiteral("INSERT INTO bookings (id, state, state_rank, created_ms) SELECT g, 'assigned',"
                                      " 1, 0 FROM generate_series(3000000, %1) g")
                           .arg(3'000'000 + kOpen - 1))
                 .isNull());
    const auto probes = [this] {
        return count(QStringLiteral("SELECT coalesce(idx_scan, 0) FROM pg_stat_user_indexes"
                                    " WHERE indexrelname = 'bookings_pkey'"));
    };
    const qint64 before = readThroughOpen();
    const qint64 probesBefore = probes();
    QVERIFY(before >= 0 && probesBefore >= 0);
    for (int i = 1; i <= kCommits; ++i) // the same bookings again: each looked up by id
        QVERIFY(appendNow(*ledger, bookingOfCar(quint64(i % 8 + 1), i % 8 + 1)).committed);
    ledger.reset(); // the backend reports its statistics as it exits, a moment later
    QVERIFY(waitUntil([&] { return probes() > probesBefore; }, 5000));
    const qint64 read = readThroughOpen() - before;
    QVERIFY2(read < kOpen, qPrintable(QStringLiteral("%1 commits read %2 rows through bookings_open (%3 open)")
                                          .arg(kCommits)
                                          .arg(read)
                                          .arg(kOpen + 8)));
}

void LedgerPostgresTest::endingMovesReleaseTheCar()
{
    auto ledger = openLedger();
    QVERIFY(ledger);
    QVERIFY(appendNow(*ledger, bookingOfCar(1, 5)).committed);
    Verdict taken = appendNow(*ledger, bookingOfCar(2, 5));
    QVERIFY(!taken.committed);
    QCOMPARE(taken.error, QStringLiteral("car_taken: car 5 is booked by booking 1"));
    QVERIFY(!ledger->reader().booking(2).value);
    QVERIFY(appendNow(*ledger, move(1, QStringLiteral("cancelled"), 5)).committed);
    QVERIFY(appendNow(*ledger, bookingOfCar(2, 5)).committed); // free again
    QVERIFY(appendNow(*ledger, move(2, QStringLiteral("expired"), 5)).committed);
    QVERIFY(appendNow(*ledger, bookingOfCar(3, 5)).committed);
    TripRecord done = trip(3, 1'700'000'900'000, 99);
    done.carId = 5;
    QVERIFY(appendNow(*ledger, done).committed);
    QVERIFY(appendNow(*ledger, bookingOfCar(4, 5)).committed);
    QCOMPARE(count(QStringLiteral("SELECT booking_id FROM cars WHERE id = 5")), 4);
}

void LedgerPostgresTest::reassignClaimsTheNewCarAndReleasesTheOld()
{
    auto ledger = openLedger();
    QVERIFY(ledger);
    QVERIFY(appendNow(*ledger, bookingOfCar(1, 1)).committed);
    QVERIFY(appendNow(*ledger, bookingOfCar(2, 2)).committed);
    const Verdict onTaken = appendNow(*ledger, move(1, QStringLiteral("assigned"), 2));
    QVERIFY(!onTaken.committed);
    QVERIFY2(onTaken.error.startsWith(QLatin1String(kLedgerCarTaken)), qPrintable(onTaken.error));
    QCOMPARE(ledger->reader().booking(1).value->booking.carId, 1); // nothing written
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM transitions WHERE booking_id = 1")), 1);
    QVERIFY(appendNow(*ledger, move(1, QStringLiteral("assigned"), 3)).committed);
    QCOMPARE(ledger->reader().booking(1).value->booking.carId, 3);
    QVERIFY(appendNow(*ledger, bookingOfCar(3, 1)).committed);  // car 1 was released
    QVERIFY(!appendNow(*ledger, bookingOfCar(4, 3)).committed); // car 3 is booking 1's
}

// As in SQLite (ledger_append_test): a row only a move made, its booking's record never
// committed, is no booking to restore or to read back.
void LedgerPostgresTest::aRowOnlyAMoveMadeIsNoBooking()
{
    auto ledger = openLedger();
    QVERIFY(ledger);
    QVERIFY(ledger->appendAndWait(move(51, QStringLiteral("arriving"), 5)));
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM bookings WHERE id = 51")), 1);
    auto open = ledger->reader().openBookings();
    QVERIFY2(open.ok(), qPrintable(open.error));
    QCOMPARE(open.value.size(), std::size_t(0));
    auto stored = ledger->reader().booking(51);
    QVERIFY2(stored.ok(), qPrintable(stored.error));
    QVERIFY(!stored.value.has_value());
}

void LedgerPostgresTest::movesOfAnEndedBookingAreRefused()
{
    auto a = openLedger();
    auto b = openLedger();
    QVERIFY(a && b);
    QVERIFY(appendNow(*a, bookingOfCar(1, 1)).committed);
    QVERIFY(appendNow(*a, move(1, QStringLiteral("cancelled"), 1)).committed);
    const Verdict again = appendNow(*b, move(1, QStringLiteral("arriving"), 1));
    QVERIFY(!again.committed);
    QVERIFY2(again.error.startsWith(QLatin1String(kLedgerBookingMoved)), qPrintable(again.error));
    const Verdict trip1 = appendNow(*b, trip(1, 1'700'000'900'000, 10));
    QVERIFY(!trip1.committed);
    QVERIFY2(trip1.error.startsWith(QLatin1String(kLedgerBookingMoved)), qPrintable(trip1.error));
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM trips")), 0);

    // Two nodes end the same bookings at once: one ending per booking.
    constexpr int kBookings = 30;
    for (int i = 0; i < kBookings; ++i)
        QVERIFY(appendNow(*a, bookingOfCar(quint64(100 + i), 100 + i)).committed);
    std::vector<std::future<Verdict>> cancels, completes;
    for (int i = 0; i < kBookings; ++i) {
        cancels.push_back(appendAsync(*a, move(quint64(100 + i), QStringLiteral("cancelled"), 100 + i)));
        TripRecord t = trip(quint64(100 + i), 1'700'000'900'000, 10);
        t.carId = 100 + i;
        completes.push_back(appendAsync(*b, t));
    }
    for (int i = 0; i < kBookings; ++i) {
        const Verdict c = cancels[std::size_t(i)].get();
        const Verdict t = completes[std::size_t(i)].get();
        QVERIFY2(c.committed != t.committed, qPrintable(c.error + QStringLiteral(" / ") + t.error));
        QVERIFY((c.committed ? t : c).error.startsWith(QLatin1String(kLedgerBookingMoved)));
    }
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM transitions WHERE booking_id >= 100 AND state IN "
                                  "('cancelled', 'completed')")),
             kBookings);
}

// One transaction holding, in append order: a claim lost to another node among good bookings, a
// car freed by a cancel and claimed again, a second claim of one car, a reassign whose freed car is
// booked next, a trip freeing its car, a move of a booking ended earlier in the batch, bad data,
// an event and a checkpoint. Each record gets the verdict it would get alone; the refused ones
// leave nothing behind, the others all commit.
void LedgerPostgresTest::oneBatchDecidesEachRecordAsInAppendOrder()
{
    auto a = openLedger();
    auto b = openLedger();
    QVERIFY(a && b);
    QVERIFY(appendNow(*a, bookingOfCar(1, 5)).committed); // node A holds car 5
    TripRecord done = trip(12, 1'700'000'900'000, 99);
    done.carId = 8;
    const std::vector<std::pair<LedgerRecord, QString>> group = {
        {bookingOfCar(10, 6), {}},
        {bookingOfCar(11, 5), QStringLiteral("car_taken: car 5 is booked by booking 1")},
        {bookingOfCar(12, 7), {}},
        {move(10, QStringLiteral("cancelled"), 6), {}},
        {bookingOfCar(13, 6), {}}, // car 6, freed just before
        {bookingOfCar(14, 6), QStringLiteral("car_taken: car 6 is booked by booking 13")},
        {move(12, QStringLiteral("assigned"), 8), {}}, // reassign: car 8 taken, car 7 freed
        {bookingOfCar(15, 7), {}},
        {move(1, QStringLiteral("cancelled"), 5), {}}, // node A's booking, ended through this node
        {bookingOfCar(16, 5), {}},
        {done, {}},                // completes booking 12, frees car 8
        {bookingOfCar(17, 8), {}}, // a checkpoint, an event, an arrival
        {ProgressRecord{13, {{57.705, 11.965}, std::nullopt, 0, 0, 1'700'000'200'000}}, {}},
        {EventRecord{QStringLiteral("batch_test"), {}, 1'700'000'000'500}, {}},
        {move(13, QStringLiteral("arriving"), 6), {}},
        {move(10, QStringLiteral("arriving"), 6), QStringLiteral("booking_moved: booking 10 is already cancelled")},
        {move(0, QStringLiteral("arriving"), 6), QStringLiteral("ledger: invalid booking id 0")},
    };
    // Appended from the writer thread's callback of a first record: they wait in the queue
    // together and the next transaction takes them all.
    std::vector<std::future<Verdict>> verdicts;
    std::promise<void> queued;
    b->append(bookingOfCar(2, 2), [&](bool, const QString &) {
        for (const auto &[record, expected] : group)
            verdicts.push_back(appendAsync(*b, record));
        queued.set_value();
    });
    queued.get_future().wait();
    for (std::size_t i = 0; i < group.size(); ++i) {
        const Verdict v = verdicts[i].get();
        QVERIFY2(v.committed == group[i].second.isEmpty(),
                 qPrintable(QStringLiteral("record %1: %2").arg(i).arg(v.error)));
        QCOMPARE(v.error, group[i].second);
    }
    QCOMPARE(count(QStringLiteral("SELECT count(DISTINCT xmin::text) FROM transitions WHERE booking_id >= 10")), 1);
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT string_agg(id || ':' || coalesce(booking_id::text, '-'), ',' ORDER BY id)"
                                      " FROM cars WHERE id BETWEEN 5 AND 8")),
             QStringLiteral("5:16,6:13,7:15,8:17"));
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT string_agg(id || ':' || state || ':' || car_id, ',' ORDER BY id)"
                                      " FROM bookings WHERE id >= 10")),
             QStringLiteral("10:cancelled:6,12:completed:8,13:arriving:6,15:assigned:7,16:assigned:5,17:assigned:8"));
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT string_agg(state || ':' || car_id, ',' ORDER BY id) FROM transitions"
                                      " WHERE booking_id = 12")),
             QStringLiteral("assigned:7,assigned:8,completed:8"));
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM transitions WHERE booking_id IN (11, 14)")), 0);
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM trips WHERE booking_id = 12")), 1);
    QCOMPARE(count(QStringLiteral("SELECT progress_ms FROM bookings WHERE id = 13")), 1'700'000'200'000);
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM events WHERE kind = 'batch_test'")), 1);
}

// An id handed out twice (schema 5): the second booking under it is refused, alone in its batch
// (booking_id_taken), never written over the first: its rider, creation time, car and claim stay.
// The same booking written again (a batch replayed record by record) is still accepted, and so is
// a booking whose row a move of it created first. Before, the create was an upsert and the second
// booking replaced the first.
// A keyed booking X; a retry under its key is handed X's id again (an id handed out twice): the
// ledger refuses it for the id, and the key still names X, so the next retry gets X, not a booking
// of its own.
void LedgerPostgresTest::aKeyedBookingRefusedForItsIdLeavesTheKeyToItsBooking()
{
    auto ledger = openLedger();
    QVERIFY(ledger);
    m_pg.psql(QStringLiteral("TRUNCATE idempotency_keys"));
    BookingRecord first = bookingOfCar(31, 5);
    first.riderTokenHash = QByteArray::fromHex("a1a2a3a4a5a6a7a8a9aaabacadaeafb0");
    first.keyed = true;
    QVERIFY(appendNow(*ledger, first).committed);
    BookingRecord retry = bookingOfCar(31, 6);
    retry.riderTokenHash = first.riderTokenHash;
    retry.keyed = true;
    retry.createdMs = first.createdMs + 7;
    retry.atMs = retry.createdMs;
    const Verdict refused = appendNow(*ledger, retry);
    QVERIFY(!refused.committed);
    QVERIFY2(refused.error.startsWith(QLatin1String(kLedgerBookingIdTaken)), qPrintable(refused.error));
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT string_agg(booking_id::text, ',') FROM idempotency_keys")),
             QStringLiteral("31"));
    const auto stored = ledger->reader().bookingByKey(first.riderTokenHash);
    QVERIFY2(stored.ok() && stored.value, qPrintable(stored.error));
    QCOMPARE(stored.value->booking.createdMs, first.createdMs);
}

// A reassign recorded for a booking whose own record never committed (an operator's reassign
// queued behind a booking whose commit failed, or a worker killed before it) claimed its new car
// for that row: the row is no booking (no creation time), so nothing ever ended it, and the car
// was taken for every node until someone edited the database.
void LedgerPostgresTest::aReassignOfABookingNeverRecordedTakesNoCar()
{
    auto ledger = openLedger();
    QVERIFY(ledger);
    const Verdict unknown = appendNow(*ledger, move(61, QStringLiteral("assigned"), 9));
    QVERIFY(!unknown.committed);
    QVERIFY2(unknown.error.startsWith(QLatin1String(kLedgerBookingUnknown)), qPrintable(unknown.error));
    QVERIFY(isLedgerRefusal(unknown.error));
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM bookings WHERE id = 61")), 0);
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM cars WHERE booking_id = 61")), 0);
    QVERIFY(appendNow(*ledger, bookingOfCar(62, 9)).committed); // car 9 is free

    // A row only a move made is no booking either.
    QVERIFY(appendNow(*ledger, move(63, QStringLiteral("arriving"), 10)).committed);
    const Verdict moveMade = appendNow(*ledger, move(63, QStringLiteral("assigned"), 11));
    QVERIFY2(moveMade.error.startsWith(QLatin1String(kLedgerBookingUnknown)), qPrintable(moveMade.error));
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM cars WHERE booking_id = 63")), 0);
    QVERIFY(appendNow(*ledger, bookingOfCar(64, 11)).committed);

    // A recorded booking is reassigned as before.
    QVERIFY(appendNow(*ledger, move(62, QStringLiteral("assigned"), 12)).committed);
    QCOMPARE(ledger->reader().booking(62).value->booking.carId, 12);
}

// Review finding (cluster): a pickup sent to one node and a cancel to another at once were both
// committed (transitions assigned, arriving, on_trip, cancelled): the ledger checked only that a
// move went forward in rank. The rider was in the car, the car free on every node, no trip, no
// fare. An operator's reassign of a booking on its trip likewise answered 200 and changed nothing.
// Each is now refused (booking_moved: the other node's move won) and nothing of it written.
void LedgerPostgresTest::aRideUnderWayIsNeitherCancelledNorExpiredNorReassigned()
{
    auto ledger = openLedger();
    QVERIFY(ledger);
    QVERIFY(appendNow(*ledger, bookingOfCar(71, 5)).committed);
    QVERIFY(appendNow(*ledger, move(71, QStringLiteral("arriving"), 5)).committed);
    QVERIFY(appendNow(*ledger, move(71, QStringLiteral("on_trip"), 5)).committed);
    for (const QString &state : {QStringLiteral("cancelled"), QStringLiteral("expired"), QStringLiteral("assigned")}) {
        const Verdict refused = appendNow(*ledger, move(71, state, state == QStringLiteral("assigned") ? 9 : 5));
        QVERIFY2(!refused.committed, qPrintable(state));
        QVERIFY2(refused.error.startsWith(QLatin1String(kLedgerBookingMoved)),
                 qPrintable(state + ": " + refused.error));
    }
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT state || '|' || car_id FROM bookings WHERE id = 71")),
             QStringLiteral("on_trip|5"));
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT booking_id FROM cars WHERE id = 5")), QStringLiteral("71"));
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM cars WHERE booking_id IS NOT NULL AND id <> 5")), 0);
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM transitions WHERE booking_id = 71 AND state IN "
                                  "('cancelled', 'expired') OR (booking_id = 71 AND car_id = 9)")),
             0);
    // A pickup into the car a committed reassign took the booking from: refused, the booking stays
    // on its new car (it was put back on the old one, the new one still claimed for it).
    QVERIFY(appendNow(*ledger, bookingOfCar(73, 7)).committed);
    QVERIFY(appendNow(*ledger, move(73, QStringLiteral("assigned"), 8)).committed);
    const Verdict oldCar = appendNow(*ledger, move(73, QStringLiteral("on_trip"), 7));
    QVERIFY(!oldCar.committed);
    QVERIFY2(oldCar.error.startsWith(QLatin1String(kLedgerBookingMoved)), qPrintable(oldCar.error));
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT state || '|' || car_id FROM bookings WHERE id = 73")),
             QStringLiteral("assigned|8"));
    QVERIFY(appendNow(*ledger, move(73, QStringLiteral("on_trip"), 8)).committed);
    QVERIFY(appendNow(*ledger, move(73, QStringLiteral("completed"), 8)).committed);
    // The ride itself ends as it should; a booking still waiting for its car can be cancelled.
    QVERIFY(appendNow(*ledger, move(71, QStringLiteral("completed"), 5)).committed);
    QVERIFY(appendNow(*ledger, bookingOfCar(72, 6)).committed);
    QVERIFY(appendNow(*ledger, move(72, QStringLiteral("arriving"), 6)).committed);
    QVERIFY(appendNow(*ledger, move(72, QStringLiteral("cancelled"), 6)).committed);
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM cars WHERE booking_id IS NOT NULL")), 0);
}

void LedgerPostgresTest::aBookingNeverReplacesAnotherUnderItsId()
{
    auto ledger = openLedger();
    QVERIFY(ledger);
    const BookingRecord first = bookingOfCar(21, 1);
    QVERIFY(appendNow(*ledger, first).committed);
    QVERIFY(appendNow(*ledger, first).committed); // the same booking again

    BookingRecord later = bookingOfCar(21, 2); // another rider, a moment later
    later.riderId = QStringLiteral("rider-other");
    later.createdMs = first.createdMs + 5;
    later.atMs = later.createdMs;
    BookingRecord sameMs = bookingOfCar(21, 3); // the same millisecond, another rider token
    sameMs.riderTokenHash = QByteArray::fromHex("0102030405060708");
    auto refusedLater = appendAsync(*ledger, later);
    auto fresh = appendAsync(*ledger, bookingOfCar(22, 4)); // in the same batch: written
    auto refusedSameMs = appendAsync(*ledger, sameMs);
    for (auto *refused : {&refusedLater, &refusedSameMs}) {
        const Verdict verdict = refused->get();
        QVERIFY(!verdict.committed);
        QVERIFY2(verdict.error.startsWith(QLatin1String(kLedgerBookingIdTaken)), qPrintable(verdict.error));
    }
    QVERIFY(fresh.get().committed);
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT rider_id || '|' || created_ms || '|' || car_id FROM bookings"
                                      " WHERE id = 21")),
             QStringLiteral("rider-21|%1|1").arg(first.createdMs));
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT string_agg(id || ':' || coalesce(booking_id::text, '-'), ',' ORDER BY id)"
                                      " FROM cars WHERE id <= 4")),
             QStringLiteral("1:21,2:-,3:-,4:22"));
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM transitions WHERE booking_id = 21")), 2);

    // The per-record function decides alike.
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT taxicore_book(21, 'rider-other', 2, 57.7, 11.97, NULL, NULL,"
                                      " 'assigned', 1, 1700000000005, 1700000000005, NULL, NULL, NULL, NULL, NULL,"
                                      " NULL, NULL, NULL, NULL)")),
             QStringLiteral("booking_id_taken: booking 21 is another booking already"));

    // A move committed before its booking made the row: the booking fills it in.
    QVERIFY(appendNow(*ledger, move(23, QStringLiteral("arriving"), 5)).committed);
    QVERIFY(appendNow(*ledger, bookingOfCar(23, 5)).committed);
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT rider_id || '|' || state FROM bookings WHERE id = 23")),
             QStringLiteral("rider-23|arriving"));
}

// The group commit is set-based: a burst of bookings and cancels runs no per-record function
// (taxicore_book, taxicore_move), one taxicore_apply_batch per transaction. Counted by the server
// (track_functions) once the ledger's sessions ended.
void LedgerPostgresTest::aGroupCommitCallsNoFunctionPerRecord()
{
    QVERIFY(!m_pg.psql(QStringLiteral("ALTER DATABASE taxicore SET track_functions = 'pl'")).isNull());
    QVERIFY(!m_pg.psql(QStringLiteral("SELECT pg_stat_reset()")).isNull());
    const auto calls = [this](const char *function) {
        return count(QStringLiteral("SELECT coalesce(sum(calls), 0) FROM pg_stat_user_functions WHERE funcname = '%1'")
                         .arg(QLatin1String(function)));
    };
    constexpr int kBookings = 300;
    quint64 transactions = 0;
    {
        auto ledger = openLedger();
        QVERIFY(ledger);
        std::atomic<int> committed{0};
        for (int i = 1; i <= kBookings; ++i) {
            ledger->append(bookingOfCar(quint64(i), i), [&](bool ok, const QString &) { committed += ok; });
            ledger->append(move(quint64(i), QStringLiteral("cancelled"), i),
                           [&](bool ok, const QString &) { committed += ok; });
        }
        QVERIFY(ledger->waitUntilIdle(30000));
        QCOMPARE(committed.load(), 2 * kBookings);
        transactions = ledger->stats().transactions;
    }
    const bool reported = waitUntil([&] { return calls("taxicore_lock_batch") >= qint64(transactions); }, 5000);
    QVERIFY(!m_pg.psql(QStringLiteral("ALTER DATABASE taxicore RESET track_functions")).isNull());
    QVERIFY2(reported, qPrintable(QStringLiteral("%1 batch locks counted, %2 transactions")
                                      .arg(calls("taxicore_lock_batch"))
                                      .arg(transactions)));
    QCOMPARE(calls("taxicore_book") + calls("taxicore_move"), qint64(0));
    QCOMPARE(calls("taxicore_apply_batch"), qint64(transactions));
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM transitions")), 2 * kBookings);
}

// A database at schema version 3 (a node of the previous release wrote it) is migrated when a
// node opens it; its bookings keep their cars, and the set-based commit applies to them.
void LedgerPostgresTest::aVersion3DatabaseIsMigrated()
{
    const QString db = QStringLiteral("v3");
    QVERIFY(!m_pg.psql(QStringLiteral("CREATE DATABASE v3"), QStringLiteral("postgres")).isNull());
    QVERIFY(!m_pg.psql(QStringLiteral("CREATE TABLE taxicore_schema (version integer NOT NULL);"
                                      " INSERT INTO taxicore_schema VALUES (3)"),
                       db)
                 .isNull());
    for (int version = 1; version <= 3; ++version) {
        for (const QByteArray &step : postgresMigrationSteps(version))
            QVERIFY2(!m_pg.psql(QString::fromUtf8(step), db).isNull(), qPrintable(m_pg.error()));
    }
    QVERIFY(!m_pg.psql(QStringLiteral("SELECT taxicore_book(7, 'rider-7', 3, 57.7, 11.97, NULL, NULL, 'assigned', 1,"
                                      " 1700000000000, 1700000000000, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
                                      " NULL)"),
                       db)
                 .isNull());
    LedgerOptions o = options();
    o.url = m_pg.url(db);
    auto opened = Ledger::open(o);
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT count(*), max(version) FROM taxicore_schema"), db),
             QStringLiteral("1|%1").arg(postgresSchemaVersion()));
    Ledger &ledger = *opened.ledger;
    const Verdict taken = appendNow(ledger, bookingOfCar(8, 3));
    QCOMPARE(taken.error, QStringLiteral("car_taken: car 3 is booked by booking 7"));
    QVERIFY(appendNow(ledger, move(7, QStringLiteral("cancelled"), 3)).committed);
    QVERIFY(appendNow(ledger, bookingOfCar(8, 3)).committed);
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT booking_id FROM cars WHERE id = 3"), db), QStringLiteral("8"));
}

void LedgerPostgresTest::nodeSlotsGiveEachNodeItsOwnIdRange()
{
    auto a = openLedger(true);
    auto b = openLedger(true);
    QVERIFY(a && b);
    const quint64 baseA = a->reader().maxBookingId().value;
    const quint64 baseB = b->reader().maxBookingId().value;
    QVERIFY(baseA >= (quint64(1) << 40) && baseB >= (quint64(1) << 40));
    QCOMPARE(baseA & ((quint64(1) << 40) - 1), quint64(0));
    QVERIFY(baseA != baseB);
    QVERIFY(appendNow(*a, bookingOfCar(baseA + 7, 1)).committed);
    QVERIFY(appendNow(*b, bookingOfCar(baseB + 3, 2)).committed);
    QCOMPARE(a->reader().maxBookingId().value, baseA + 7);
    QCOMPARE(b->reader().maxBookingId().value, baseB + 3);
    QCOMPARE(openLedger()->reader().maxBookingId().value, std::max(baseA + 7, baseB + 3)); // no slot: overall
    // A slot is free again once its node closed.
    const quint64 freed = baseB;
    b.reset();
    // The server lets the slot go when it has seen the session end, a moment after the close.
    std::unique_ptr<Ledger> c;
    QVERIFY(waitUntil(
        [&] {
            c = openLedger(true);
            return c && (c->reader().maxBookingId().value & ~((quint64(1) << 40) - 1)) == freed;
        },
        5000));
}

void LedgerPostgresTest::threeNodesCreateTheSchemaAtOnce()
{
    QVERIFY(!m_pg.psql(QStringLiteral("CREATE DATABASE fresh"), QStringLiteral("postgres")).isNull());
    LedgerOptions o = options();
    o.url = m_pg.url(QStringLiteral("fresh"));
    std::vector<std::future<Ledger::Opened>> opening;
    for (int i = 0; i < 3; ++i)
        opening.push_back(std::async(std::launch::async, [o] { return Ledger::open(o); }));
    std::vector<std::unique_ptr<Ledger>> ledgers;
    for (auto &f : opening) {
        Ledger::Opened opened = f.get();
        QVERIFY2(opened.ledger, qPrintable(opened.error));
        ledgers.push_back(std::move(opened.ledger));
    }
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT count(*), max(version) FROM taxicore_schema"), QStringLiteral("fresh")),
             QStringLiteral("1|%1").arg(postgresSchemaVersion()));
    for (std::size_t i = 0; i < ledgers.size(); ++i)
        QVERIFY(ledgers[i]->appendAndWait(bookingOfCar(quint64(i + 1), int(i + 1))));
}

void LedgerPostgresTest::openFailsNamingTheDatabaseNotThePassword()
{
    LedgerOptions o = options();
    o.url = QStringLiteral("postgresql://taxi:s3cret@127.0.0.1:1/taxicore");
    QElapsedTimer took;
    took.start();
    const auto opened = Ledger::open(o);
    QVERIFY(!opened.ledger);
    QVERIFY2(opened.error.contains(QStringLiteral("PostgreSQL at 127.0.0.1:1/taxicore is unavailable")),
             qPrintable(opened.error));
    QVERIFY(!opened.error.contains(QStringLiteral("s3cret")));
    QVERIFY(took.elapsed() < kConnectTimeoutMs + 1000);

    o.url = m_pg.url().replace(QStringLiteral("postgres@"), QStringLiteral("postgres:s3cret@"));
    auto ok = Ledger::open(o); // trust authentication ignores the password
    QVERIFY2(ok.ledger, qPrintable(ok.error));
    QCOMPARE(ok.ledger->location(), QStringLiteral("postgresql://postgres@127.0.0.1:%1/taxicore").arg(m_pg.port()));
}

// PostgreSQL stopped: a booking fails within the timeouts with a message naming the database;
// started again: the same Ledger object commits the next booking (it reconnected by itself).
void LedgerPostgresTest::unavailableDatabaseFailsFastThenReconnects()
{
    auto ledger = openLedger();
    QVERIFY(ledger);
    QVERIFY(appendNow(*ledger, bookingOfCar(1, 1)).committed);
    m_pg.stop();
    QElapsedTimer took;
    took.start();
    const Verdict down = appendNow(*ledger, bookingOfCar(2, 2));
    QVERIFY(!down.committed);
    QVERIFY2(
        down.error.startsWith(QStringLiteral("PostgreSQL at 127.0.0.1:%1/taxicore is unavailable: ").arg(m_pg.port())),
        qPrintable(down.error));
    QVERIFY2(took.elapsed() < kConnectTimeoutMs + kStatementTimeoutMs + 1000,
             qPrintable(QString::number(took.elapsed())));
    const Verdict stillDown = appendNow(*ledger, bookingOfCar(3, 3));
    QVERIFY(!stillDown.committed);
    const auto read = ledger->reader().openBookings();
    QVERIFY(!read.ok());
    QVERIFY2(read.error.contains(QStringLiteral("is unavailable")), qPrintable(read.error));

    QVERIFY2(m_pg.start(), qPrintable(m_pg.error()));
    const Verdict back = appendNow(*ledger, bookingOfCar(4, 4));
    QVERIFY2(back.committed, qPrintable(back.error));
    const auto reread = ledger->reader().openBookings();
    QVERIFY2(reread.ok(), qPrintable(reread.error));
    QCOMPARE(reread.value.size(), std::size_t(2)); // 1 and 4; 2 and 3 were never written
}

// PostgreSQL restarted between two bookings (an upgrade, a settings change): the server ended the
// ledger's idle connections as it stopped. The first booking after it is back must commit, and the
// first read must answer: on the old code both failed once on the dead connection (a 503 for a
// rider although the database was up).
void LedgerPostgresTest::aRestartedDatabaseTakesTheNextBookingAtOnce()
{
    auto ledger = openLedger();
    QVERIFY(ledger);
    QVERIFY(appendNow(*ledger, bookingOfCar(1, 1)).committed);
    QVERIFY(ledger->reader().openBookings().ok());
    m_pg.stop();
    QVERIFY2(m_pg.start(), qPrintable(m_pg.error()));
    const Verdict next = appendNow(*ledger, bookingOfCar(2, 2));
    QVERIFY2(next.committed, qPrintable(next.error));
    const auto read = ledger->reader().openBookings();
    QVERIFY2(read.ok(), qPrintable(read.error));
    QCOMPARE(read.value.size(), std::size_t(2));
}

// A node's slot (its booking-id range) is an advisory lock of its session, which a restart ends.
// The writer takes it again when it reconnects; once the ledger's connections replaced a dead
// session by themselves, "the session still answers" no longer proved the lock was held, and a
// node started after the restart took the same slot (the same ids).
void LedgerPostgresTest::aNodeKeepsItsSlotAcrossARestart()
{
    auto first = openLedger(true);
    QVERIFY(first);
    const quint64 firstBase = first->reader().maxBookingId().value;
    m_pg.stop();
    QVERIFY2(m_pg.start(), qPrintable(m_pg.error()));
    const Verdict after = appendNow(*first, bookingOfCar(1, 1)); // the writer reconnects, and re-takes its slot
    QVERIFY2(after.committed, qPrintable(after.error));
    auto second = openLedger(true);
    QVERIFY(second);
    const quint64 secondBase = second->reader().maxBookingId().value;
    QVERIFY2((secondBase >> 40) != (firstBase >> 40),
             qPrintable(QStringLiteral("both nodes hold slot %1").arg(secondBase >> 40)));
}

// What the writer does when a batch's answer is lost: on a new connection, end the session that sent
// it, then read its mark. A transaction still open in that session is rolled back by the ending, so
// "no mark" is final (NotCommitted); a committed mark gives the batch's refusals back.
void LedgerPostgresTest::aBatchWhoseAnswerWasLostIsSettledByItsMark()
{
    PostgresConnection::Settings settings{m_pg.url(), kConnectTimeoutMs, kStatementTimeoutMs};
    PostgresConnection sender(settings);
    QCOMPARE(sender.connect(), QString());
    QCOMPARE(sender.run("BEGIN; INSERT INTO taxicore_batch_outcomes (writer, batch, refusals)"
                        " VALUES ('lost-writer', 1, '[]')",
                        QStringLiteral("an uncommitted batch")),
             QString());
    QString error;
    const PgSession lost = PostgresCommitOutcome::sessionOf(sender, &error);
    QVERIFY2(lost.pid > 0, qPrintable(error));

    PostgresConnection asker(settings);
    QCOMPARE(asker.connect(), QString());
    std::vector<QString> verdicts(3);
    QCOMPARE(PostgresCommitOutcome::settle(asker, lost, {"lost-writer", 1}, verdicts, &error),
             PostgresCommitOutcome::Known::NotCommitted);
    QCOMPARE(error, QString());
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM pg_stat_activity WHERE pid = %1").arg(lost.pid)), 0);
    QVERIFY(!sender.run("SELECT 1", QStringLiteral("after being ended")).isEmpty()); // its session is over

    m_pg.psql(QStringLiteral("INSERT INTO taxicore_batch_outcomes (writer, batch, refusals)"
                             " VALUES ('lost-writer', 2, '[[2, \"car_taken: car 7 is taken\"]]')"));
    QCOMPARE(PostgresCommitOutcome::settle(asker, lost, {"lost-writer", 2}, verdicts, &error),
             PostgresCommitOutcome::Known::Committed);
    QCOMPARE(verdicts, (std::vector<QString>{QString(), QStringLiteral("car_taken: car 7 is taken"), QString()}));

    // A session that only has the lost one's process id (PostgreSQL restarted, the id reused by
    // another node's connection) is not ended: it is told apart by its start time.
    PostgresConnection bystander(settings);
    QCOMPARE(bystander.connect(), QString());
    PgSession sameIdEarlierStart = PostgresCommitOutcome::sessionOf(bystander, &error);
    sameIdEarlierStart.startedAt = "2001-01-01 00:00:00+00";
    QCOMPARE(PostgresCommitOutcome::settle(asker, sameIdEarlierStart, {"lost-writer", 3}, verdicts, &error),
             PostgresCommitOutcome::Known::NotCommitted);
    QCOMPARE(bystander.run("SELECT 1", QStringLiteral("after another session was settled")), QString());
}

// Every batch writes its mark in its own transaction (with the records it refused); the writer
// deletes its settled marks every PostgresBatchWriter::kForgetEvery batches, so they do not pile up.
void LedgerPostgresTest::eachBatchLeavesAMarkThatIsForgottenOnceSettled()
{
    m_pg.psql(QStringLiteral("TRUNCATE taxicore_batch_outcomes"));
    // A writer that died two days ago (each process start is a new writer) left a mark behind.
    m_pg.psql(QStringLiteral("INSERT INTO taxicore_batch_outcomes (writer, batch, refusals, written_at)"
                             " VALUES ('dead-writer', 7, '[]', now() - interval '2 days')"));
    auto ledger = openLedger();
    QVERIFY(ledger);
    const int batches = PostgresBatchWriter::kForgetEvery + 6;
    for (int i = 1; i <= batches; ++i) {
        const Verdict verdict = appendNow(*ledger, bookingOfCar(quint64(600 + i), 0));
        QVERIFY2(verdict.committed, qPrintable(verdict.error));
    }
    const qint64 marks = count(QStringLiteral("SELECT count(*) FROM taxicore_batch_outcomes"));
    QVERIFY2(marks >= 1 && marks <= PostgresBatchWriter::kForgetEvery,
             qPrintable(QStringLiteral("%1 marks after %2 batches").arg(marks).arg(batches)));
    QCOMPARE(count(QStringLiteral("SELECT count(DISTINCT writer) FROM taxicore_batch_outcomes")), 1);
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM taxicore_batch_outcomes WHERE writer = 'dead-writer'")), 0);
}

// While the writer learns whether a lost commit landed, every record queued behind it is refused at
// once, worded as an outage (a rider hears "the database is unavailable"). The refusal took the
// queue one batch (batchMaxRecords) at a time: under load the records past the first batch waited
// one settle attempt (a connect timeout and a second) per batch for their 503.
void LedgerPostgresTest::recordsQueuedWhileACommitIsSettledAreAllRefusedAtOnce()
{
    LedgerOptions o = options();
    o.batchMaxRecords = 4;
    auto opened = Ledger::open(o);
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    Ledger &ledger = *opened.ledger;
    QVERIFY(appendNow(ledger, bookingOfCar(1, 1)).committed); // the writer's session is open

    m_pg.freeze(true);
    auto first = appendAsync(ledger, bookingOfCar(2, 2)); // sent; its answer will be lost
    QTest::qWait(200);
    constexpr int kQueued = 12; // three batches' worth
    std::mutex mutex;
    std::vector<qint64> refusedAtMs;
    std::vector<QString> errors;
    QElapsedTimer clock;
    clock.start();
    for (int i = 0; i < kQueued; ++i) {
        ledger.append(bookingOfCar(quint64(10 + i), 10 + i), [&](bool committed, const QString &error) {
            std::lock_guard lock(mutex);
            refusedAtMs.push_back(committed ? -1 : clock.elapsed());
            errors.push_back(error);
        });
    }
    const bool allAnswered = waitUntil(
        [&] {
            std::lock_guard lock(mutex);
            return int(refusedAtMs.size()) == kQueued;
        },
        4 * (kConnectTimeoutMs + kStatementTimeoutMs) + 5000);
    m_pg.freeze(false);
    QVERIFY(allAnswered);
    {
        std::lock_guard lock(mutex);
        for (int i = 0; i < kQueued; ++i) {
            QVERIFY2(refusedAtMs[std::size_t(i)] >= 0, "a record queued behind an unsettled commit was written");
            QVERIFY2(errors[std::size_t(i)].contains(QStringLiteral("is unavailable")),
                     qPrintable(errors[std::size_t(i)]));
        }
        const auto [earliest, latest] = std::minmax_element(refusedAtMs.begin(), refusedAtMs.end());
        QVERIFY2(*latest - *earliest < 500, qPrintable(QStringLiteral("refused over %1 ms, from %2 ms to %3 ms")
                                                           .arg(*latest - *earliest)
                                                           .arg(*earliest)
                                                           .arg(*latest)));
    }
    // Thawed, the sent commit is settled either way, as the ledger holds it.
    QVERIFY(first.wait_for(std::chrono::seconds(30)) == std::future_status::ready);
    const Verdict settled = first.get();
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM bookings WHERE id = 2")), settled.committed ? 1 : 0);
    QCOMPARE(count(QStringLiteral("SELECT count(*) FROM bookings WHERE id >= 10")), 0);
}

// A ride's checkpoints after the wall clock stepped back an hour: newer by the time on board, so
// kept (schema 11; judged by the wall clock alone they were refused for the hour); a late one with
// less time on board is not.
void LedgerPostgresTest::aCheckpointAfterTheWallClockSteppedBackIsKept()
{
    auto ledger = openLedger();
    QVERIFY(ledger);
    constexpr qint64 kAt = 1'700'000'200'000;
    constexpr qint64 kHourMs = 3'600'000;
    QVERIFY(ledger->appendAndWait(bookingOfCar(51, 5)));
    QVERIFY(ledger->appendAndWait(move(51, QStringLiteral("on_trip"), 5)));
    // The set-based batch judges them (the per-record function, used after a failed batch, takes
    // the same condition's text: TAXICORE_PROGRESS_IS_NEWER).
    for (const LedgerRecord &record :
         std::vector<LedgerRecord>{ProgressRecord{51, {{57.700, 11.960}, std::nullopt, 100, 10, kAt}},
                                   ProgressRecord{51, {{57.701, 11.961}, std::nullopt, 200, 20, kAt - kHourMs}},
                                   ProgressRecord{51, {{57.600, 11.900}, std::nullopt, 150, 15, kAt + 1000}}})
        QVERIFY(appendNow(*ledger, record).committed);
    QCOMPARE(m_pg.psql(QStringLiteral("SELECT trip_elapsed_s, trip_distance_m FROM bookings WHERE id = 51")),
             QStringLiteral("20|200"));
}

// A waiting booking's checkpoints carry its age on the monotonic clock (schema 12), read back for
// the restore, and are newer by it: one after the wall clock stepped back an hour is kept, a late
// one with a younger age is not.
void LedgerPostgresTest::aWaitingBookingsAgeIsCheckpointedAndOrdersItsCheckpoints()
{
    auto ledger = openLedger();
    QVERIFY(ledger);
    constexpr qint64 kAt = 1'700'000'200'000;
    constexpr qint64 kHourMs = 3'600'000;
    QVERIFY(ledger->appendAndWait(bookingOfCar(52, 6)));
    for (const LedgerRecord &record :
         std::vector<LedgerRecord>{ProgressRecord{52, {{57.700, 11.960}, std::nullopt, 0, 0, kAt, 10.0}},
                                   ProgressRecord{52, {{57.700, 11.960}, std::nullopt, 0, 0, kAt - kHourMs, 20.0}},
                                   ProgressRecord{52, {{57.700, 11.960}, std::nullopt, 0, 0, kAt + 1000, 15.0}}})
        QVERIFY(appendNow(*ledger, record).committed);
    const auto stored = ledger->reader().booking(52);
    QVERIFY2(stored.ok() && stored.value, qPrintable(stored.error));
    const auto &progress = stored.value->booking.progress;
    QVERIFY(progress && progress->waitedS);
    QCOMPARE(*progress->waitedS, 20.0);
    QCOMPARE(progress->atMs, kAt - kHourMs);
}

QTEST_GUILESS_MAIN(LedgerPostgresTest)
#include "ledger_postgres_test.moc"
