#pragma once

#include <QByteArray>

namespace taxicore {

// Bearer secrets: the admin token and each booking's rider token.

// `bytes` random bytes from the system generator (QRandomGenerator::system), as lowercase hex.
QByteArray randomHexToken(int bytes = 16);

// What is kept of a rider token (in the shared region and the ledger), never the token itself:
// the first 16 bytes of its SHA-256.
inline constexpr int kTokenHashBytes = 16;
QByteArray tokenHash(const QByteArray &token);

// Compares without an early exit, so the time taken does not tell how much of a guess matched.
bool sameSecret(const QByteArray &a, const QByteArray &b);

// The token of an `Authorization: Bearer <token>` header value; empty when there is none.
QByteArray bearerToken(const QByteArray &authorization);

} // namespace taxicore
