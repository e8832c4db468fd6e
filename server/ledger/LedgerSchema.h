#pragma once

#include <QStringList>

namespace taxicore {

class LedgerConnection;

// The ledger's schema as an ordered list of migrations; PRAGMA user_version is the number applied.
// Migration n (1-based) takes a version n-1 database to version n. Never edit a released step:
// append a new one.
int ledgerSchemaVersion();
QStringList ledgerMigrationSteps(int version);

// Applies the missing migrations in one BEGIN IMMEDIATE transaction (so processes opening at once
// migrate exactly once). Refuses a database newer than this code. Doubles as the write probe of
// open(): a locked or read-only file fails here. Returns an error message, or empty.
QString migrateLedger(LedgerConnection &connection, int giveUpMs);

} // namespace taxicore
