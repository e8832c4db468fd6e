#pragma once

#include <QString>

namespace taxicore {

// The admin token kept in DATA_DIR/admin-token: read if the file is there, else made at first
// start (128 random bits from the system generator, hex) and written with mode 0600, so a
// restart with the same data directory keeps the token operators already have.
// Empty with `error` set when the file cannot be read or written.
QString loadOrCreateAdminToken(const QString &dataDir, QString &error);
// The same for the car devices' token, DATA_DIR/device-token.
QString loadOrCreateDeviceToken(const QString &dataDir, QString &error);

} // namespace taxicore
