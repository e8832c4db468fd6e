#include "http/IdempotencyKey.h"

#include "wire/RequestInput.h"

#include <QCryptographicHash>
#include <algorithm>

namespace taxicore {

std::optional<QByteArray> riderTokenForIdempotencyKey(const QByteArray &field)
{
    if (field.isNull())
        return std::nullopt;
    const bool visibleAscii = std::all_of(field.begin(), field.end(), [](char c) { return c >= 0x21 && c <= 0x7e; });
    if (field.size() < kIdempotencyKeyMinBytes || field.size() > kIdempotencyKeyMaxBytes || !visibleAscii)
        throwApiError(400, "invalid_idempotency_key",
                      QStringLiteral("Idempotency-Key must be one field of %1 to %2 visible ASCII characters "
                                     "(a UUID will do)")
                          .arg(kIdempotencyKeyMinBytes)
                          .arg(kIdempotencyKeyMaxBytes));
    // Domain-separated, so the token is no hash anyone computes for another purpose; the ledger
    // keeps a hash of this token, never the key.
    QCryptographicHash hash(QCryptographicHash::Sha256);
    hash.addData(QByteArrayView("TaxiCore rider token for an Idempotency-Key\n"));
    hash.addData(field);
    return hash.result().left(16).toHex();
}

} // namespace taxicore
