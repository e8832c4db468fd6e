#pragma once

#include "http/BookingLimiter.h"
#include "http/BookingRateLimiter.h"
#include "redis/RedisEndpoint.h"

#include <QByteArray>
#include <QThreadPool>
#include <atomic>
#include <memory>

namespace taxicore {

struct ControlBlock;

namespace redis {
class RedisClient;
} // namespace redis

// The booking buckets of a cluster (issue 17): one per client address in Redis, shared by every
// node and process, so a client spread over the nodes by the proxy still gets one allowance. A Lua
// script takes a token atomically, with Redis' own clock (node clocks and clock steps do not
// matter), and lets an idle bucket expire once it would be full again. Same burst, rate and
// Retry-After as BookingRateLimiter, read from the region. When Redis is not connected or does not
// answer within kRedisTimeoutMs, this node's own buckets (BookingRateLimiter) decide instead:
// limited per node, never unlimited; the switch both ways is written once to the event log.
class SharedBookingLimiter final : public BookingLimiter {
public:
    // How long a booking waits for Redis' answer before the node's own bucket decides.
    static constexpr int kRedisTimeoutMs = 250;
    // A bucket's key is this followed by the client address (IPv4 dotted, IPv6 canonical).
    static constexpr const char *kKeyPrefix = "taxicore:rate:";
    // An idle bucket expires this long after it would be full again (then it equals a new one).
    static constexpr int kIdleSlackMs = 1000;

    // Connects to Redis (waiting at most kRedisTimeoutMs, so a node starts even without it) and
    // loads the script there.
    SharedBookingLimiter(ControlBlock &control, const redis::RedisEndpoint &endpoint);
    // Answers every pending take (from the local buckets if Redis has not answered) and waits for
    // their `later` to finish.
    ~SharedBookingLimiter() override;

    // At once from the local bucket while Redis is not connected; otherwise later, from Redis.
    std::optional<int> take(const QHostAddress &client, Decided later) override;

    // The Redis key of `client`'s bucket.
    static QByteArray keyOf(const QHostAddress &client);
    // True while Redis decides (false: the node's own buckets do).
    bool isShared() const { return !m_usingLocal.load(std::memory_order_relaxed); }

private:
    void evaluate(const QHostAddress &client, Decided later, bool byHash);
    void decideLocally(const QHostAddress &client, const Decided &later, const QByteArray &why);
    void answer(Decided later, int retryAfterS);
    void noteShared(bool shared, const QByteArray &why);

    ControlBlock &m_control;
    BookingRateLimiter m_local;
    QThreadPool m_pool; // runs every `later`: the Redis client's thread never books
    std::unique_ptr<redis::RedisClient> m_owned;
    // m_owned's client, still valid while its destructor answers what is pending (the unique_ptr
    // is already null then, and an answer may send EVAL after a NOSCRIPT).
    redis::RedisClient *m_redis;
    QString m_redisName; // host:port, for the event log
    std::atomic<bool> m_closing{false};
    std::atomic<bool> m_usingLocal{false};
};

} // namespace taxicore
