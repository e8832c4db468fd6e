#pragma once

#include <QString>

namespace taxicore {

// What an admin or device token may be, from a flag, the environment or a file: safe in an
// Authorization header and on a command line, and long enough not to be guessed.
inline constexpr char kTokenRule[] = "16 to 128 characters of A-Z a-z 0-9 . _ ~ + / = -";
bool isWellFormedToken(const QString &token);

// The admin token kept in DATA_DIR/admin-token: read if the file is there, else made at first
// start (128 random bits from the system generator, hex) and written with mode 0600, so a
// restart with the same data directory keeps the token operators already have. A file that is
// there is the operator's: whitespace around the token (the final newline) is ignored, but a
// token breaking kTokenRule is an error naming the file, never replaced.
// Empty with `error` set when the file cannot be read or written, or holds no well-formed token.
QString loadOrCreateAdminToken(const QString &dataDir, QString &error);
// The same for the car devices' token, DATA_DIR/device-token.
QString loadOrCreateDeviceToken(const QString &dataDir, QString &error);

} // namespace taxicore
