#include "http/ClientBuckets.h"

#include <climits>
#include <cstring>

namespace taxicore {

namespace {

// How many buckets after the address's own a lookup tries before reusing the stalest of them.
constexpr int kProbe = 16;

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

bool holds(const RateBucket &bucket, const Q_IPV6ADDR &key)
{
    return !isFree(bucket) && std::memcmp(bucket.client, key.c, sizeof key.c) == 0;
}

} // namespace

Q_IPV6ADDR clientKey(const QHostAddress &client)
{
    bool isV4 = false;
    const quint32 v4 = client.toIPv4Address(&isV4);
    if (isV4)
        return QHostAddress(QStringLiteral("::ffff:%1").arg(QHostAddress(v4).toString())).toIPv6Address();
    return client.toIPv6Address();
}

RateBucket *findClientBucket(AccessBlock &block, const Q_IPV6ADDR &key)
{
    const std::size_t home = homeOf(key);
    for (int i = 0; i < kProbe; ++i) {
        RateBucket &candidate = block.buckets[(home + std::size_t(i)) % kRateBuckets];
        if (holds(candidate, key))
            return &candidate;
    }
    return nullptr;
}

RateBucket &clientBucket(AccessBlock &block, const Q_IPV6ADDR &key, int64_t nowMs, double burst)
{
    const std::size_t home = homeOf(key);
    RateBucket *stalest = nullptr;
    // A free bucket ranks before every used one, then the least recently used.
    const auto staleness = [](const RateBucket &b) { return isFree(b) ? INT64_MIN : b.updatedMs; };
    for (int i = 0; i < kProbe; ++i) {
        RateBucket &candidate = block.buckets[(home + std::size_t(i)) % kRateBuckets];
        if (holds(candidate, key))
            return candidate;
        if (!stalest || staleness(candidate) < staleness(*stalest))
            stalest = &candidate;
    }
    std::memset(static_cast<void *>(stalest), 0, sizeof *stalest);
    std::memcpy(stalest->client, key.c, sizeof key.c);
    stalest->tokens = burst;
    stalest->updatedMs = nowMs;
    return *stalest;
}

} // namespace taxicore
