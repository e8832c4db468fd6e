#include "http/BookingRateLimiter.h"

#include "http/ClientBuckets.h"
#include "region/Clock.h"
#include "region/SlotLock.h"

#include <algorithm>
#include <cmath>

namespace taxicore {

BookingRateLimiter::BookingRateLimiter(AccessBlock &block)
    : m_block(block)
{
}

std::optional<int> BookingRateLimiter::take(const QHostAddress &client, Decided)
{
    return take(client, clock::monotonicMs());
}

int BookingRateLimiter::take(const QHostAddress &client, int64_t nowMs)
{
    const double perMs = m_block.bookingRatePerMinute / 60'000.0;
    const double burst = std::max(1.0, m_block.bookingBurst);
    SlotLock lock(m_block.bucketsLock);
    RateBucket *bucket = &clientBucket(m_block, clientKey(client), nowMs, burst);
    const double elapsed = double(std::max<int64_t>(0, nowMs - bucket->updatedMs));
    bucket->tokens = std::min(burst, bucket->tokens + elapsed * perMs);
    bucket->updatedMs = std::max(bucket->updatedMs, nowMs);
    if (bucket->tokens >= 1.0) {
        bucket->tokens -= 1.0;
        return 0;
    }
    return std::max(1, int(std::ceil((1.0 - bucket->tokens) / perMs / 1000.0)));
}

} // namespace taxicore
