#pragma once

// One hiredis async connection on the calling thread's event loop (hiredis' Qt adapter): connect
// with a deadline, AUTH and SELECT, then `ready`; on any loss `lost(reason)` and a new attempt
// after a backoff (reconnectMinMs doubling to reconnectMaxMs). Shared by RedisClient and
// RedisSubscriber; not thread-safe, every call on the owning thread.

#include "redis/RedisClientOptions.h"
#include "redis/RedisEndpoint.h"
#include "redis/RedisReply.h"

#include <QByteArray>
#include <QList>
#include <QTimer>
#include <functional>
#include <memory>

struct redisAsyncContext;
struct redisReply;
class RedisQtAdapter;

namespace taxicore::redis {

class RedisConnection {
public:
    struct Handlers {
        std::function<void()> ready;                     // connected, logged in, database selected
        std::function<void(const QByteArray &why)> lost; // the connection is gone (or never came)
    };
    // hiredis' reply callback: `reply` is null when the connection went before the answer.
    using ReplyFn = void (*)(redisAsyncContext *context, void *reply, void *privdata);

    RedisConnection(RedisEndpoint endpoint, RedisClientOptions options, Handlers handlers);
    // Frees the context: hiredis calls every pending reply callback with a null reply.
    ~RedisConnection();
    RedisConnection(const RedisConnection &) = delete;
    RedisConnection &operator=(const RedisConnection &) = delete;

    void open(); // first attempt now; later ones by themselves
    bool isReady() const { return m_state == State::Ready; }
    // Queues a command on the ready connection (false when not ready or hiredis refused it).
    bool send(const QList<QByteArray> &argv, ReplyFn callback, void *privdata);
    // Closes the connection for `why` (a stuck server, a missed liveness probe); reconnects after the backoff.
    void drop(const QByteArray &why);
    // Why the last attempt or connection failed ("Connection refused", "timed out after 1000 ms").
    QByteArray lastError() const { return m_lastError; }
    // Why a reply callback got a null reply on `context`: the error that closed it.
    QByteArray lossReason(const redisAsyncContext *context) const;
    std::uint64_t reconnects() const { return m_reconnects; }
    const RedisEndpoint &endpoint() const { return m_endpoint; }

    static RedisReply toReply(const redisReply *reply);

private:
    enum class State { Idle, Connecting, LoggingIn, Ready, Closed };

    void connectNow();
    void onConnected(int status);
    void onDisconnected(int status);
    void onHandshakeReply(const redisReply *reply);
    void closeContext(const QByteArray &why);
    void lose(const QByteArray &why);
    void scheduleReconnect();

    static void connectCallback(const redisAsyncContext *context, int status);
    static void disconnectCallback(const redisAsyncContext *context, int status);
    static void handshakeCallback(redisAsyncContext *context, void *reply, void *privdata);

    RedisEndpoint m_endpoint;
    RedisClientOptions m_options;
    Handlers m_handlers;
    State m_state = State::Idle;
    redisAsyncContext *m_context = nullptr;
    std::unique_ptr<RedisQtAdapter> m_adapter;
    int m_handshakePending = 0;
    QByteArray m_lastError;
    QByteArray m_closeReason; // set while we free a context ourselves
    int m_backoffMs = 0;
    bool m_everReady = false;
    std::uint64_t m_reconnects = 0;
    QTimer m_connectDeadline;
    QTimer m_reconnectTimer;
};

} // namespace taxicore::redis
