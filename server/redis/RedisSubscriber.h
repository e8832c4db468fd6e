#pragma once

// A Redis pub/sub subscription on its own connection and thread. Messages published while it is
// disconnected are lost (that is pub/sub), so `onSubscribed` runs after every successful
// (re)subscribe: the owner reloads its snapshot there. A dead server or path is found by a probe
// on the subscribed connection every pingIntervalMs (a PSUBSCRIBE of a private pattern: hiredis
// 0.14 loses the answer to a PING there); no answer within pingDeadlineMs and it reconnects with
// the backoff.

#include "redis/RedisClientOptions.h"
#include "redis/RedisEndpoint.h"

#include <QByteArray>
#include <QList>
#include <functional>
#include <memory>

namespace taxicore::redis {

class RedisSubscriber {
public:
    using MessageFn = std::function<void(const QByteArray &channel, const QByteArray &payload)>;

    // Both callbacks run on the subscriber's thread.
    RedisSubscriber(RedisEndpoint endpoint, QList<QByteArray> channels, MessageFn onMessage,
                    std::function<void()> onSubscribed, RedisClientOptions options = {});
    ~RedisSubscriber(); // stops the thread; no callback runs after it returns
    RedisSubscriber(const RedisSubscriber &) = delete;
    RedisSubscriber &operator=(const RedisSubscriber &) = delete;

    // Subscribed to every channel now (false while connecting or after a loss).
    bool isSubscribed() const;
    // Successful subscribes after the first one.
    std::uint64_t resubscribes() const;

private:
    struct Shared;
    class Core;
    class Thread;

    std::shared_ptr<Shared> m_shared;
    std::unique_ptr<Thread> m_thread;
};

} // namespace taxicore::redis
