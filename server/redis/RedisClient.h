#pragma once

// A thread-safe Redis client: one connection, pipelined, on a thread of its own (hiredis async on
// Qt's event loop). command() never blocks; replies come back in order, on the client's thread.
// While Redis is away commands wait (bounded) and then fail with an Error reply; the connection
// comes back by itself (AUTH/SELECT on each connect).

#include "redis/RedisClientOptions.h"
#include "redis/RedisEndpoint.h"
#include "redis/RedisReply.h"

#include <QByteArray>
#include <QList>
#include <functional>
#include <memory>

class QThread;

namespace taxicore::redis {

class RedisClient {
public:
    using Done = std::function<void(const RedisReply &)>;

    explicit RedisClient(RedisEndpoint endpoint, RedisClientOptions options = {});
    // Stops the thread; every command not answered yet gets an Error reply first (on that thread).
    // Not from a `done` callback: the thread cannot wait for itself.
    ~RedisClient();
    RedisClient(const RedisClient &) = delete;
    RedisClient &operator=(const RedisClient &) = delete;

    // Sends `argv` (e.g. {"SET", key, value}); `done` runs on the client's thread with the reply, or
    // with an Error if Redis was unavailable for commandTimeoutMs, did not answer within
    // commandTimeoutMs, or maxQueued commands were already outstanding (then at once). Never blocks.
    // SUBSCRIBE, PSUBSCRIBE and MONITOR are refused: they take the connection over (RedisSubscriber).
    void command(QList<QByteArray> argv, Done done = {});
    // For threads without an event loop: sends and waits up to `timeoutMs` for the reply. Never call
    // it from a `done` callback (the client's own thread): it answers an Error at once there.
    RedisReply commandAndWait(QList<QByteArray> argv, int timeoutMs);

    bool isConnected() const;
    RedisClientStats stats() const;
    const RedisEndpoint &endpoint() const;
    const RedisClientOptions &options() const;

private:
    struct Shared;
    class Core;
    class Thread;

    std::shared_ptr<Shared> m_shared;
    std::unique_ptr<Thread> m_thread;
};

} // namespace taxicore::redis
