#pragma once

#include "region/RegionLayout.h"

#include <QHostAddress>
#include <cstdint>

namespace taxicore {

// The region's table of per-client buckets (AccessBlock::buckets), one per client address: its
// booking rate tokens (BookingRateLimiter) and its open bookings (OpenBookingsPerClient). Every
// function here expects AccessBlock::bucketsLock held by the caller.

// IPv4 and IPv4-mapped IPv6 alike.
Q_IPV6ADDR clientKey(const QHostAddress &client);

// The bucket of `key`, or null when it holds none (it was never seen, or was evicted).
RateBucket *findClientBucket(AccessBlock &block, const Q_IPV6ADDR &key);

// The bucket of `key`; when it holds none, the free or else the least recently used one among
// those it may live in is taken over and started afresh (`burst` tokens, no open bookings).
RateBucket &clientBucket(AccessBlock &block, const Q_IPV6ADDR &key, int64_t nowMs, double burst);

} // namespace taxicore
