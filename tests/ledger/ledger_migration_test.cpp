// Schema migrations: a database of each earlier version opens with the current code, keeps its
// data and ends at the current version; a newer database is refused rather than damaged.
#include "LedgerTestSupport.h"

#include "ledger/LedgerSchema.h"

#include <QTemporaryDir>
#include <algorithm>
#include <QTest>

using namespace taxicore;
using namespace ledgertest;

class LedgerMigrationTest : public QObject {
    Q_OBJECT

private slots:
    void migratesFromEachEarlierVersion_data();
    void migratesFromEachEarlierVersion();
    void refusesNewerSchema();
};

namespace {

// Builds a version-`version` database with the SQL of migrations 1..version and one trip.
bool createAtVersion(const QString &file, int version)
{
    RawConnection raw(file);
    for (int v = 1; v <= version; ++v) {
        for (const QString &sql : ledgerMigrationSteps(v)) {
            if (!raw.exec(sql))
                return false;
        }
    }
    if (version >= 1) {
        if (!raw.exec(QStringLiteral("INSERT INTO bookings (id, rider_id, car_id, state, state_rank,"
                                     " created_ms, updated_ms) VALUES (1, 'r1', 7, 'on_trip', 3, 10, 20)")))
            return false;
        if (!raw.exec(QStringLiteral("INSERT INTO trips (booking_id, car_id, ended_ms, fare_total, currency)"
                                     " VALUES (2, 8, 1000, 120.0, 'SEK')")))
            return false;
    }
    return raw.exec(QStringLiteral("PRAGMA user_version=%1").arg(version));
}

} // namespace

void LedgerMigrationTest::migratesFromEachEarlierVersion_data()
{
    QTest::addColumn<int>("from");
    for (int v = 0; v < ledgerSchemaVersion(); ++v)
        QTest::addRow("v%d", v) << v;
}

void LedgerMigrationTest::migratesFromEachEarlierVersion()
{
    QFETCH(int, from);
    QTemporaryDir dir;
    const QString file = ledgerFilePath(dir.path());
    QVERIFY(createAtVersion(file, from));

    auto opened = Ledger::open(optionsFor(dir.path()));
    QVERIFY2(opened.ledger, qPrintable(opened.error));
    {
        RawConnection raw(file);
        QCOMPARE(raw.scalar(QStringLiteral("PRAGMA user_version")), ledgerSchemaVersion());
        QCOMPARE(raw.scalar(QStringLiteral("SELECT count(*) FROM sqlite_master WHERE name = 'trips_by_end'")), 1);
    }
    if (from >= 1) {
        const auto open = opened.ledger->reader().openBookings();
        QVERIFY2(open.ok(), qPrintable(open.error));
        QCOMPARE(open.value.size(), std::size_t(1));
        QCOMPARE(open.value[0].carId, 7);
        const auto trips = opened.ledger->reader().trips(0, 2000, 10);
        QVERIFY2(trips.ok(), qPrintable(trips.error));
        QCOMPARE(trips.value.size(), std::size_t(1));
        QCOMPARE(trips.value[0].fare.total, 120.0);
        QCOMPARE(trips.value[0].fare.surge, 1.0); // the v2 column's default for old trips
        // v3: a booking from before ownership has no rider token hash (only operators move it).
        QVERIFY(open.value[0].riderTokenHash.isEmpty());
        // v4: a booking from before has no stored price or checkpoint (metered at surge 1).
        QVERIFY(!open.value[0].surge && !open.value[0].quote && !open.value[0].progress);
    }
    // The migrated file takes new records of every kind; v3 keeps who owns a booking.
    BookingRecord owned = booking(3);
    owned.riderTokenHash = QByteArray::fromHex("00112233445566778899aabbccddeeff");
    QVERIFY(opened.ledger->appendAndWait(owned));
    {
        const auto open = opened.ledger->reader().openBookings();
        QVERIFY2(open.ok(), qPrintable(open.error));
        const auto restored =
            std::find_if(open.value.begin(), open.value.end(), [](const BookingRecord &b) { return b.bookingId == 3; });
        QVERIFY(restored != open.value.end());
        QCOMPARE(restored->riderTokenHash, owned.riderTokenHash);
    }
    // v4 keeps the price a booking was answered and where its ride stands, for a restart.
    BookingRecord priced = booking(4, QStringLiteral("on_trip"));
    priced.surge = 1.4;
    priced.quote = LedgerQuote{{45, 27, 22, 95, 1.4, 131.6, QStringLiteral("SEK")}, 2000, 240};
    QVERIFY(opened.ledger->appendAndWait(priced));
    ProgressRecord checkpoint;
    checkpoint.bookingId = 4;
    checkpoint.progress = {{57.71, 11.98}, LedgerPoint{57.72, 11.99}, 812.5, 95.25, 1'700'000'000'500};
    QVERIFY(opened.ledger->appendAndWait(checkpoint));
    {
        const auto open = opened.ledger->reader().openBookings();
        QVERIFY2(open.ok(), qPrintable(open.error));
        const auto restored =
            std::find_if(open.value.begin(), open.value.end(), [](const BookingRecord &b) { return b.bookingId == 4; });
        QVERIFY(restored != open.value.end());
        QCOMPARE(restored->surge.value_or(0), 1.4);
        QVERIFY(restored->quote);
        QCOMPARE(restored->quote->fare.total, 131.6);
        QCOMPARE(restored->quote->distanceM, 2000.0);
        QVERIFY(restored->progress);
        QCOMPARE(restored->progress->carAt.lat, 57.71);
        QCOMPARE(restored->progress->destination->lng, 11.99);
        QCOMPARE(restored->progress->tripDistanceM, 812.5);
        QCOMPARE(restored->progress->tripElapsedS, 95.25);
    }
    QVERIFY(opened.ledger->appendAndWait(trip(3, 1500, 99)));
    QCOMPARE(opened.ledger->reader().report(0, 2000).value.trips, from >= 1 ? 2 : 1);
}

void LedgerMigrationTest::refusesNewerSchema()
{
    QTemporaryDir dir;
    const QString file = ledgerFilePath(dir.path());
    QVERIFY(createAtVersion(file, ledgerSchemaVersion()));
    {
        RawConnection raw(file);
        QVERIFY(raw.exec(QStringLiteral("PRAGMA user_version=%1").arg(ledgerSchemaVersion() + 1)));
    }
    auto opened = Ledger::open(optionsFor(dir.path()));
    QVERIFY(!opened.ledger);
    QVERIFY2(opened.error.contains(QLatin1StringView("newer")), qPrintable(opened.error));
    QVERIFY2(opened.error.contains(file), qPrintable(opened.error));
}

QTEST_GUILESS_MAIN(LedgerMigrationTest)
#include "ledger_migration_test.moc"
