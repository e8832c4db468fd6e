#include "ledger/LedgerSchema.h"

#include "ledger/LedgerConnection.h"

#include <QSqlError>
#include <QSqlQuery>

namespace taxicore {

namespace {

// 1: bookings (current state), transitions (history), trips (total fare), events.
const QStringList kMigration1 = {
    QStringLiteral("CREATE TABLE bookings (id INTEGER PRIMARY KEY, rider_id TEXT, car_id INTEGER,"
                   " pickup_lat REAL, pickup_lng REAL, dropoff_lat REAL, dropoff_lng REAL,"
                   " state TEXT NOT NULL, state_rank INTEGER NOT NULL,"
                   " created_ms INTEGER, updated_ms INTEGER)"),
    QStringLiteral("CREATE TABLE transitions (id INTEGER PRIMARY KEY, booking_id INTEGER NOT NULL,"
                   " state TEXT NOT NULL, car_id INTEGER, at_ms INTEGER NOT NULL)"),
    QStringLiteral("CREATE INDEX transitions_by_booking ON transitions (booking_id)"),
    QStringLiteral("CREATE TABLE trips (booking_id INTEGER PRIMARY KEY, car_id INTEGER, rider_id TEXT,"
                   " started_ms INTEGER, ended_ms INTEGER, distance_m REAL, duration_s REAL,"
                   " fare_total REAL, currency TEXT)"),
    QStringLiteral("CREATE TABLE events (id INTEGER PRIMARY KEY, at_ms INTEGER NOT NULL,"
                   " kind TEXT NOT NULL, detail TEXT, pid INTEGER)"),
};

// 2: the fare breakdown of each trip; reports by time range and the restore scan get indexes.
const QStringList kMigration2 = {
    QStringLiteral("ALTER TABLE trips ADD COLUMN fare_base REAL"),
    QStringLiteral("ALTER TABLE trips ADD COLUMN fare_distance REAL"),
    QStringLiteral("ALTER TABLE trips ADD COLUMN fare_time REAL"),
    QStringLiteral("ALTER TABLE trips ADD COLUMN fare_minimum REAL"),
    QStringLiteral("ALTER TABLE trips ADD COLUMN fare_surge REAL NOT NULL DEFAULT 1.0"),
    QStringLiteral("CREATE INDEX trips_by_end ON trips (ended_ms)"),
    QStringLiteral("CREATE INDEX bookings_open ON bookings (state_rank) WHERE state_rank < 4"),
    QStringLiteral("CREATE INDEX events_by_time ON events (at_ms)"),
};

// 3: who owns each booking: the hash of the rider token it was answered with (never the token),
// so only that rider may still move it after a restart. Older bookings keep NULL: no owner.
const QStringList kMigration3 = {
    QStringLiteral("ALTER TABLE bookings ADD COLUMN rider_token_hash BLOB"),
};

// 4: what a restored booking needs to resume where it was (issue 15): the surge and quote it was
// booked with (its fare), and a progress checkpoint the primary writes while its car drives (car
// position, the trip's destination, metres and simulated seconds on board). Older rows keep NULL:
// no quote, surge 1, no checkpoint.
const QStringList kMigration4 = {
    QStringLiteral("ALTER TABLE bookings ADD COLUMN surge REAL"),
    QStringLiteral("ALTER TABLE bookings ADD COLUMN quote_total REAL"),
    QStringLiteral("ALTER TABLE bookings ADD COLUMN quote_base REAL"),
    QStringLiteral("ALTER TABLE bookings ADD COLUMN quote_distance REAL"),
    QStringLiteral("ALTER TABLE bookings ADD COLUMN quote_time REAL"),
    QStringLiteral("ALTER TABLE bookings ADD COLUMN quote_minimum REAL"),
    QStringLiteral("ALTER TABLE bookings ADD COLUMN quote_distance_m REAL"),
    QStringLiteral("ALTER TABLE bookings ADD COLUMN quote_duration_s REAL"),
    QStringLiteral("ALTER TABLE bookings ADD COLUMN car_lat REAL"),
    QStringLiteral("ALTER TABLE bookings ADD COLUMN car_lng REAL"),
    QStringLiteral("ALTER TABLE bookings ADD COLUMN destination_lat REAL"),
    QStringLiteral("ALTER TABLE bookings ADD COLUMN destination_lng REAL"),
    QStringLiteral("ALTER TABLE bookings ADD COLUMN trip_distance_m REAL"),
    QStringLiteral("ALTER TABLE bookings ADD COLUMN trip_elapsed_s REAL"),
    QStringLiteral("ALTER TABLE bookings ADD COLUMN progress_ms INTEGER"),
};

// 5: which booking each Idempotency-Key made, by the hash of the rider token derived from the key
// (never the key): a retried POST finds its booking here, after a restart too, and a second
// booking under the same key is refused in its commit. Bookings made without a key have no row.
const QStringList kMigration5 = {
    QStringLiteral("CREATE TABLE idempotency_keys (token_hash BLOB PRIMARY KEY, booking_id INTEGER NOT NULL)"
                   " WITHOUT ROWID"),
};

// 6: a progress checkpoint carries the booking's age on the monotonic clock (simulated seconds
// since it was made): at a restart a waiting booking's age is that plus the wall-clock time since
// the checkpoint, so a wall-clock step before the checkpoint no longer ages it (its wall-clock
// age alone expired every waiting booking at a restart after a step forward). Older rows keep NULL.
const QStringList kMigration6 = {
    QStringLiteral("ALTER TABLE bookings ADD COLUMN waited_s REAL"),
};

const QList<QStringList> kMigrations = {kMigration1, kMigration2, kMigration3, kMigration4, kMigration5, kMigration6};

int readUserVersion(LedgerConnection &connection, QString *error)
{
    QSqlQuery query(connection.database());
    if (!query.exec(QStringLiteral("PRAGMA user_version")) || !query.next()) {
        *error = connection.describe(query.lastError(), QStringLiteral("reading the schema version"));
        return -1;
    }
    return query.value(0).toInt();
}

QString applyMigrations(LedgerConnection &connection, int from)
{
    for (int version = from + 1; version <= ledgerSchemaVersion(); ++version) {
        const QString doing = QStringLiteral("migrating the schema to version %1").arg(version);
        for (const QString &sql : ledgerMigrationSteps(version)) {
            const QString error = connection.exec(sql, doing);
            if (!error.isEmpty())
                return error;
        }
    }
    return connection.exec(QStringLiteral("PRAGMA user_version=%1").arg(ledgerSchemaVersion()),
                           QStringLiteral("recording the schema version"));
}

} // namespace

int ledgerSchemaVersion()
{
    return int(kMigrations.size());
}

QStringList ledgerMigrationSteps(int version)
{
    return version >= 1 && version <= ledgerSchemaVersion() ? kMigrations.at(version - 1) : QStringList();
}

QString migrateLedger(LedgerConnection &connection, int giveUpMs)
{
    QString error = connection.beginImmediate(giveUpMs, nullptr);
    if (!error.isEmpty())
        return error;
    const int version = readUserVersion(connection, &error);
    if (error.isEmpty() && version > ledgerSchemaVersion())
        error = QStringLiteral("ledger %1: schema version %2 is newer than this program's %3; "
                               "refusing to write to it")
                    .arg(connection.file())
                    .arg(version)
                    .arg(ledgerSchemaVersion());
    if (error.isEmpty() && version < ledgerSchemaVersion())
        error = applyMigrations(connection, version);
    if (error.isEmpty())
        error = connection.commit(giveUpMs, nullptr);
    if (!error.isEmpty())
        connection.rollback();
    return error;
}

} // namespace taxicore
