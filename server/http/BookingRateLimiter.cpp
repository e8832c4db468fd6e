#include "http/BookingRateLimiter.h"

#include "region/Clock.h"
#include "region/SlotLock.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>

namespace taxicore {

namespace {

// How many buckets after the address's own a lookup tries before reusing the stalest of them.
constexpr int kProbe = 16;

Q_IPV6ADDR keyOf(const QHostAddress &client)
{
    bool isV4 = false;
    const quint32 v4 = client.toIPv4Address(&isV4);
    if (isV4) // IPv4 and IPv4-mapped IPv6 alike
        return QHostAddress(QStringLiteral("::ffff:%1").arg(QHostAddress(v4).toString())).toIPv6Address();
    return client.toIPv6Address();
}

bool isFree(const RateBucket &bucket)
{
    static const uint8_t zero[sizeof bucket.client] = {};
    return std::memcmp(bucket.client, zero, sizeof zero) == 0 && bucket.updatedMs == 0;
}

std::size_t homeOf(const Q_IPV6ADDR &key)
{
    uint64_t h = 1469598103934665603ull; // FNV-1a
    for (uint8_t byte : key.c) {
        h ^= byte;
        h *= 1099511628211ull;
    }
    return std::size_t(h % kRateBuckets);
}

} // namespace

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
    const Q_IPV6ADDR key = keyOf(client);
    const std::size_t home = homeOf(key);

    SlotLock lock(m_block.bucketsLock);
    RateBucket *bucket = nullptr;
    RateBucket *stalest = nullptr;
    // A free bucket ranks before every used one, then the least recently used.
    const auto staleness = [](const RateBucket &b) { return isFree(b) ? INT64_MIN : b.updatedMs; };
    for (int i = 0; i < kProbe; ++i) {
        RateBucket &candidate = m_block.buckets[(home + std::size_t(i)) % kRateBuckets];
        if (!isFree(candidate) && std::memcmp(candidate.client, key.c, sizeof key.c) == 0) {
            bucket = &candidate;
            break;
        }
        if (!stalest || staleness(candidate) < staleness(*stalest))
            stalest = &candidate;
    }
    if (!bucket) {
        bucket = stalest;
        std::memcpy(bucket->client, key.c, sizeof key.c);
        bucket->tokens = burst;
        bucket->updatedMs = nowMs;
    }
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
