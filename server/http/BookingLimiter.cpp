#include "http/BookingLimiter.h"

#include "wire/ApiError.h"

namespace taxicore {

ApiResponse tooManyBookingsResponse(int retryAfterS)
{
    ApiResponse tooMany =
        errorResponse(429, "too_many_bookings",
                      QStringLiteral("this client created bookings too fast; try again in %1 s").arg(retryAfterS),
                      {{QStringLiteral("retry_after_s"), retryAfterS}});
    tooMany.headers.append({QByteArrayLiteral("Retry-After"), QByteArray::number(retryAfterS)});
    return tooMany;
}

} // namespace taxicore
