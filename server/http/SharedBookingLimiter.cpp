#include "http/SharedBookingLimiter.h"

#include "control/EventLog.h"
#include "redis/RedisClient.h"
#include "region/Clock.h"
#include "region/RegionLayout.h"

#include <QCryptographicHash>
#include <QDebug>
#include <algorithm>
#include <cmath>
#include <limits>

namespace taxicore {

namespace {

// One token bucket, taken atomically in Redis. KEYS[1]: the client's bucket; ARGV[1]: burst;
// ARGV[2]: tokens per millisecond; ARGV[3]: milliseconds until an idle bucket is gone. Returns 0
// when a token was taken, else the whole seconds until one will be (as BookingRateLimiter::take).
// The clock is Redis' (TIME): one clock for every node, and scripts replicate by effects (Redis 7).
constexpr const char *kScript = R"lua(
local burst = tonumber(ARGV[1])
local perMs = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local saved = redis.call('HMGET', KEYS[1], 'tokens', 'ms')
local tokens = tonumber(saved[1]) or burst
local ms = tonumber(saved[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - ms) * perMs)
ms = math.max(ms, now)
local retry = 0
if tokens >= 1 then
  tokens = tokens - 1
else
  retry = math.max(1, math.ceil((1 - tokens) / perMs / 1000))
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ms', tostring(ms))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return retry
)lua";

const QByteArray &scriptSha()
{
    static const QByteArray sha = QCryptographicHash::hash(kScript, QCryptographicHash::Sha1).toHex();
    return sha;
}

redis::RedisClientOptions clientOptions()
{
    redis::RedisClientOptions options;
    options.commandTimeoutMs = SharedBookingLimiter::kRedisTimeoutMs;
    options.connectTimeoutMs = SharedBookingLimiter::kRedisTimeoutMs;
    return options;
}

} // namespace

SharedBookingLimiter::SharedBookingLimiter(ControlBlock &control, const redis::RedisEndpoint &endpoint)
    : m_control(control)
    , m_local(control.access)
    , m_owned(std::make_unique<redis::RedisClient>(endpoint, clientOptions()))
    , m_redis(m_owned.get())
    , m_redisName(endpoint.display())
{
    // Loaded now so the first bookings need not carry it; EVAL loads it again if Redis lost it.
    const redis::RedisReply loaded = m_redis->commandAndWait({"SCRIPT", "LOAD", kScript}, kRedisTimeoutMs);
    if (!loaded.ok())
        noteShared(false, loaded.text);
}

SharedBookingLimiter::~SharedBookingLimiter()
{
    m_closing = true; // what is still pending now is answered locally, without a word in the log
    m_owned.reset();  // every take still waiting for Redis is answered from the local buckets
    m_pool.waitForDone();
}

QByteArray SharedBookingLimiter::keyOf(const QHostAddress &client)
{
    bool isV4 = false;
    const quint32 v4 = client.toIPv4Address(&isV4); // IPv4 and IPv4-mapped IPv6 alike
    QHostAddress plain = isV4 ? QHostAddress(v4) : client;
    plain.setScopeId({});
    return kKeyPrefix + plain.toString().toLatin1();
}

std::optional<int> SharedBookingLimiter::take(const QHostAddress &client, Decided later)
{
    // Not connected (down, or reconnecting): the local bucket at once, rather than every booking
    // waiting out the timeout. The client reconnects by itself meanwhile.
    if (!m_redis->isConnected()) {
        noteShared(false, QByteArrayLiteral("not connected"));
        return m_local.take(client, clock::monotonicMs());
    }
    evaluate(client, std::move(later), true);
    return std::nullopt;
}

void SharedBookingLimiter::evaluate(const QHostAddress &client, Decided later, bool byHash)
{
    const AccessBlock &access = m_control.access;
    const double burst = std::max(1.0, access.bookingBurst);
    const double perMs = access.bookingRatePerMinute / 60'000.0;
    const auto idleMs = qint64(std::ceil(burst / perMs)) + kIdleSlackMs;
    QList<QByteArray> argv{byHash ? QByteArrayLiteral("EVALSHA") : QByteArrayLiteral("EVAL"),
                           byHash ? scriptSha() : QByteArray(kScript),
                           "1",
                           keyOf(client),
                           QByteArray::number(burst, 'g', 17),
                           QByteArray::number(perMs, 'g', 17),
                           QByteArray::number(idleMs)};
    m_redis->command(std::move(argv), [this, client, later = std::move(later), byHash](const redis::RedisReply &reply) {
        if (reply.type == redis::RedisReply::Type::Integer) {
            noteShared(true, {});
            answer(later, int(std::clamp<long long>(reply.integer, 0, std::numeric_limits<int>::max())));
            return;
        }
        // Redis restarted or its script cache was flushed: EVAL sends the script and caches it.
        if (byHash && reply.type == redis::RedisReply::Type::Error && reply.text.startsWith("NOSCRIPT")) {
            evaluate(client, later, false);
            return;
        }
        decideLocally(client, later, reply.ok() ? QByteArrayLiteral("an unexpected reply") : reply.text);
    });
}

void SharedBookingLimiter::decideLocally(const QHostAddress &client, const Decided &later, const QByteArray &why)
{
    noteShared(false, why);
    answer(later, m_local.take(client, clock::monotonicMs()));
}

void SharedBookingLimiter::answer(Decided later, int retryAfterS)
{
    // Off the Redis client's thread: a booking costs far more than a script, and replies queue there.
    m_pool.start([later = std::move(later), retryAfterS] { later(retryAfterS); });
}

void SharedBookingLimiter::noteShared(bool shared, const QByteArray &why)
{
    if (m_closing || m_usingLocal.exchange(!shared, std::memory_order_relaxed) == !shared)
        return;
    const QString text =
        shared ? QStringLiteral("booking rate limits are shared through Redis %1 again").arg(m_redisName)
               // What happens first: an event's text is cut at kEventTextBytes, and a reason can be long.
               : QStringLiteral("this node's own buckets apply to booking rate limits until Redis %1 is back (%2)")
                     .arg(m_redisName, QString::fromUtf8(why));
    if (shared)
        qInfo().noquote() << "rate limit:" << text;
    else
        qWarning().noquote() << "rate limit:" << text;
    EventLog(m_control).append("rate_limit", text);
}

} // namespace taxicore
