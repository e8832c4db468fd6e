#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

namespace taxicore {

class PostgresConnection;

// The PostgreSQL ledger's schema as an ordered list of migrations; taxicore_schema.version is the
// number applied. The tables and columns are the SQLite ledger's (LedgerSchema) plus `cars`, the
// claim of each car, and the functions that write one record each with its compare-and-swap.
// Never edit a released step: append a new one.
int postgresSchemaVersion();
QList<QByteArray> postgresMigrationSteps(int version);

// The advisory-lock class of everything the ledger locks (with a second key: 0 the schema, s the
// node slot s); "TAXI" in ASCII, so another application's locks do not collide with ours.
inline constexpr int kPostgresLockClass = 0x54415849;

// Applies the missing migrations in one transaction holding pg_advisory_xact_lock, so nodes
// opening at once migrate exactly once. Refuses a database newer than this code.
QString migratePostgresLedger(PostgresConnection &connection);

} // namespace taxicore
