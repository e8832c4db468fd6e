#pragma once

#include "region/RegionLayout.h"

#include <array>
#include <cmath>

namespace taxicore {

inline constexpr int kMetricsRouteSlots = kRouteKinds;

// The status codes counted one by one; anything else lands in "other" by class.
inline constexpr std::array<int, kStatusKinds> kCountedStatuses = {200, 201, 204, 304, 400, 404, 405, 408,
                                                                   409, 413, 414, 429, 431, 500, 503, 0 /* other */};

inline int statusIndex(int status)
{
    for (int i = 0; i < kStatusKinds - 1; ++i)
        if (kCountedStatuses[std::size_t(i)] == status)
            return i;
    return kStatusKinds - 1;
}

// Latency bucket i counts requests faster than kLatencyBucketBoundUs(i) microseconds:
// half-octave steps from 1 µs up to ~2^31.5 µs (about an hour).
inline double latencyBucketBoundUs(int bucket)
{
    return std::exp2((bucket + 1) / 2.0);
}

inline int latencyBucket(double micros)
{
    int bucket = 0;
    while (bucket < kLatencyBuckets - 1 && micros >= latencyBucketBoundUs(bucket))
        ++bucket;
    return bucket;
}

} // namespace taxicore
