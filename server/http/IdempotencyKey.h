#pragma once

#include <QByteArray>
#include <optional>

namespace taxicore {

// A rider's Idempotency-Key on POST /api/v1/bookings: a retried booking (its 201 lost on the way)
// is answered with the booking the key made instead of a second one. Only the hash of a rider
// token is ever kept, yet a replay must show the token again, so a keyed booking's token is
// derived from its key: whoever holds the key holds the booking, like its token.
inline constexpr int kIdempotencyKeyMinBytes = 16; // a guessable key would be a guessable token
inline constexpr int kIdempotencyKeyMaxBytes = 255;

// The rider token for the request's Idempotency-Key field (null: no field; several fields arrive
// joined by ", "), none without the field. Throws 400 invalid_idempotency_key when the key is not
// kIdempotencyKeyMinBytes..kIdempotencyKeyMaxBytes visible ASCII characters.
std::optional<QByteArray> riderTokenForIdempotencyKey(const QByteArray &field);

} // namespace taxicore
