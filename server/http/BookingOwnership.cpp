#include "http/BookingOwnership.h"

#include "http/OperatorAccess.h"
#include "wire/RequestInput.h"
#include "wire/SecretToken.h"

namespace taxicore {

void requireBookingOwner(const ApiRequest &request, const BookingSnapshot &booking)
{
    const QByteArray token = bearerToken(request.authorization);
    if (token.isEmpty())
        throwUnauthorized("rider_token_required",
                          QStringLiteral("booking %1 can only be changed with Authorization: Bearer <rider_token> "
                                         "(the rider_token its booking answer gave)")
                              .arg(booking.id));
    if (carriesAdminToken(request))
        return;
    if (booking.riderTokenHash.isEmpty() || !sameSecret(tokenHash(token), booking.riderTokenHash))
        throwApiError(403, "not_your_booking",
                      QStringLiteral("the bearer token is not the rider token of booking %1").arg(booking.id));
}

} // namespace taxicore
