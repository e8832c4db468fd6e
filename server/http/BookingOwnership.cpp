#include "http/BookingOwnership.h"

#include "http/OperatorAccess.h"
#include "wire/RequestInput.h"
#include "wire/SecretToken.h"

namespace taxicore {

BookingAccess bookingAccess(const QByteArray &token, const QByteArray &riderTokenHash)
{
    if (token.isEmpty())
        return BookingAccess::NoToken;
    if (isAdminToken(token))
        return BookingAccess::Granted;
    if (riderTokenHash.isEmpty() || !sameSecret(tokenHash(token), riderTokenHash))
        return BookingAccess::NotOwner;
    return BookingAccess::Granted;
}

void requireRiderToken(const ApiRequest &request, uint64_t id)
{
    if (bearerToken(request.authorization).isEmpty())
        throwUnauthorized("rider_token_required",
                          QStringLiteral("booking %1 is only for its rider: send Authorization: Bearer <rider_token> "
                                         "(the rider_token its booking answer gave)")
                              .arg(id));
}

void requireBookingOwner(const ApiRequest &request, uint64_t id, const QByteArray &riderTokenHash)
{
    requireRiderToken(request, id);
    if (bookingAccess(bearerToken(request.authorization), riderTokenHash) != BookingAccess::Granted)
        throwApiError(403, "not_your_booking",
                      QStringLiteral("the bearer token is not the rider token of booking %1").arg(id));
}

void requireBookingOwner(const ApiRequest &request, const BookingSnapshot &booking)
{
    requireBookingOwner(request, booking.id, booking.riderTokenHash);
}

} // namespace taxicore
