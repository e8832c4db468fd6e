#pragma once

#include "http/BookingLimiter.h"
#include "region/RegionLayout.h"

#include <QHostAddress>

namespace taxicore {

// A token bucket per client (peer address) for creating bookings: `bookingBurst` at once, then
// `bookingRatePerMinute`. The buckets live in the shared region under one cross-process lock,
// so in processes mode a client gets the same allowance whichever worker serves it. When every
// bucket is in use, the stalest is reused (it is at or near full by then, so a client
// evicted early gains at most one fresh burst).
class BookingRateLimiter final : public BookingLimiter {
public:
    explicit BookingRateLimiter(AccessBlock &block);

    // Always answers at once (now on the monotonic clock); `later` is never called.
    std::optional<int> take(const QHostAddress &client, Decided later) override;

    // Takes one booking from `client`'s bucket: 0 when allowed, else the whole seconds until
    // the next one is (Retry-After, at least 1).
    int take(const QHostAddress &client, int64_t nowMs);

private:
    AccessBlock &m_block;
};

} // namespace taxicore
