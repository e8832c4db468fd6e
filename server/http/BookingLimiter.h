#pragma once

#include "wire/HttpTypes.h"

#include <QHostAddress>
#include <functional>
#include <optional>

namespace taxicore {

// How fast a client may create bookings (POST /api/v1/bookings): a token bucket per client
// address, `--booking-burst` at once, then `--booking-rate` per minute. BookingRateLimiter keeps
// the buckets in this machine's region and answers at once; SharedBookingLimiter keeps them in
// Redis for every node of a cluster and answers later, from one of its own threads.
class BookingLimiter {
public:
    // 0 when the booking is allowed, else the whole seconds until the next one is (Retry-After, ≥ 1).
    using Decided = std::function<void(int retryAfterS)>;

    virtual ~BookingLimiter() = default;
    // Takes one booking from `client`'s bucket. Returns the answer when it is known at once;
    // otherwise nothing, and `later` runs exactly once with it, on a thread of the limiter's
    // (every pending `later` has run when the limiter is destroyed).
    virtual std::optional<int> take(const QHostAddress &client, Decided later) = 0;
};

// 429 too_many_bookings with Retry-After and retry_after_s: what a refused booking answers.
ApiResponse tooManyBookingsResponse(int retryAfterS);

} // namespace taxicore
