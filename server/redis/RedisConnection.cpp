#include "redis/RedisConnection.h"

#include <hiredis/adapters/qt.h>
#include <hiredis/async.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <vector>

namespace taxicore::redis {

RedisConnection::RedisConnection(RedisEndpoint endpoint, RedisClientOptions options, Handlers handlers)
    : m_endpoint(std::move(endpoint))
    , m_options(options)
    , m_handlers(std::move(handlers))
    , m_adapter(std::make_unique<RedisQtAdapter>())
{
    m_connectDeadline.setSingleShot(true);
    QObject::connect(&m_connectDeadline, &QTimer::timeout, [this] {
        drop(QByteArrayLiteral("no connection within ") + QByteArray::number(m_options.connectTimeoutMs) + " ms");
    });
    m_reconnectTimer.setSingleShot(true);
    QObject::connect(&m_reconnectTimer, &QTimer::timeout, [this] { connectNow(); });
}

RedisConnection::~RedisConnection()
{
    m_state = State::Closed;
    m_connectDeadline.stop();
    m_reconnectTimer.stop();
    if (m_context) {
        redisAsyncContext *context = m_context;
        m_context = nullptr;
        m_closeReason = QByteArrayLiteral("the client was closed");
        redisAsyncFree(context); // pending callbacks run now, with a null reply
    }
    // hiredis' Qt adapter writes to its last context in its destructor, which is freed by now:
    // point it at a live, empty one first.
    redisAsyncContext parking{};
    m_adapter->setContext(&parking);
    m_adapter.reset();
}

void RedisConnection::open()
{
    if (m_state == State::Idle && !m_reconnectTimer.isActive())
        connectNow();
}

void RedisConnection::connectNow()
{
    if (m_state == State::Closed)
        return;
    const QByteArray host = m_endpoint.host.toUtf8();
    redisAsyncContext *context = redisAsyncConnect(host.constData(), m_endpoint.port);
    if (!context) {
        lose(QByteArrayLiteral("out of memory"));
        return;
    }
    if (context->err) {
        const QByteArray why(context->errstr);
        redisAsyncFree(context);
        lose(why);
        return;
    }
    context->data = this;
    m_context = context;
    m_state = State::Connecting;
    m_adapter->setContext(context);
    // The adapter must be attached first: setting the connect callback arms the write event.
    redisAsyncSetConnectCallback(context, &RedisConnection::connectCallback);
    redisAsyncSetDisconnectCallback(context, &RedisConnection::disconnectCallback);
    m_connectDeadline.start(m_options.connectTimeoutMs);
}

void RedisConnection::connectCallback(const redisAsyncContext *context, int status)
{
    auto *self = static_cast<RedisConnection *>(context->data);
    if (self && context == self->m_context)
        self->onConnected(status);
}

void RedisConnection::disconnectCallback(const redisAsyncContext *context, int status)
{
    auto *self = static_cast<RedisConnection *>(context->data);
    if (self && context == self->m_context)
        self->onDisconnected(status);
}

void RedisConnection::handshakeCallback(redisAsyncContext *context, void *reply, void *privdata)
{
    auto *self = static_cast<RedisConnection *>(privdata);
    // A null reply means the context is going; its disconnect callback (or our drop) says why.
    if (reply && context == self->m_context)
        self->onHandshakeReply(static_cast<const redisReply *>(reply));
}

void RedisConnection::onConnected(int status)
{
    if (status != REDIS_OK) {
        // hiredis frees the context after this callback returns.
        const QByteArray why =
            m_context->errstr[0] ? QByteArray(m_context->errstr) : QByteArrayLiteral("connect failed");
        m_context = nullptr;
        lose(why);
        return;
    }
    m_state = State::LoggingIn;
    m_handshakePending = 0;
    if (!m_endpoint.password.isEmpty()) {
        QList<QByteArray> auth{QByteArrayLiteral("AUTH")};
        if (!m_endpoint.user.isEmpty())
            auth << m_endpoint.user.toUtf8();
        auth << m_endpoint.password.toUtf8();
        if (send(auth, &RedisConnection::handshakeCallback, this))
            ++m_handshakePending;
    }
    if (m_endpoint.db != 0) {
        if (send({QByteArrayLiteral("SELECT"), QByteArray::number(m_endpoint.db)}, &RedisConnection::handshakeCallback,
                 this))
            ++m_handshakePending;
    }
    if (m_handshakePending == 0)
        onHandshakeReply(nullptr);
}

void RedisConnection::onHandshakeReply(const redisReply *reply)
{
    if (reply && reply->type == REDIS_REPLY_ERROR) {
        // Wrong password or database: retrying soon will not help much, but the operator may fix
        // Redis' side; the backoff keeps it cheap.
        drop(QByteArrayLiteral("login refused: ") + QByteArray(reply->str, qsizetype(reply->len)));
        return;
    }
    if (m_handshakePending > 0)
        --m_handshakePending;
    if (m_handshakePending > 0)
        return;
    m_connectDeadline.stop();
    m_state = State::Ready;
    m_backoffMs = 0;
    if (m_everReady)
        ++m_reconnects;
    m_everReady = true;
    if (m_handlers.ready)
        m_handlers.ready();
}

void RedisConnection::onDisconnected(int status)
{
    const QByteArray why = status == REDIS_OK     ? QByteArrayLiteral("connection closed")
                           : m_context->errstr[0] ? QByteArray(m_context->errstr)
                                                  : QByteArrayLiteral("connection lost");
    m_context = nullptr; // hiredis frees it after this callback
    lose(why);
}

bool RedisConnection::send(const QList<QByteArray> &argv, ReplyFn callback, void *privdata)
{
    if (!m_context || (m_state != State::Ready && m_state != State::LoggingIn))
        return false;
    std::vector<const char *> pointers;
    std::vector<size_t> lengths;
    pointers.reserve(size_t(argv.size()));
    lengths.reserve(size_t(argv.size()));
    for (const QByteArray &argument : argv) {
        pointers.push_back(argument.constData());
        lengths.push_back(size_t(argument.size()));
    }
    return redisAsyncCommandArgv(m_context, callback, privdata, int(argv.size()), pointers.data(), lengths.data())
           == REDIS_OK;
}

void RedisConnection::drop(const QByteArray &why)
{
    if (m_state == State::Closed || (m_state == State::Idle && !m_context))
        return;
    closeContext(why);
    lose(why);
}

void RedisConnection::closeContext(const QByteArray &why)
{
    if (!m_context)
        return;
    redisAsyncContext *context = m_context;
    m_context = nullptr; // its disconnect callback is ours no more
    m_closeReason = why;
    // Inside a hiredis callback this is deferred until the callback returns; either way every
    // pending reply callback then runs once with a null reply.
    redisAsyncFree(context);
}

QByteArray RedisConnection::lossReason(const redisAsyncContext *context) const
{
    if (context && context->err && context->errstr[0])
        return QByteArray(context->errstr);
    return m_closeReason.isEmpty() ? QByteArrayLiteral("connection lost") : m_closeReason;
}

void RedisConnection::lose(const QByteArray &why)
{
    if (m_state == State::Closed)
        return;
    m_state = State::Idle;
    m_handshakePending = 0;
    m_lastError = why;
    m_connectDeadline.stop();
    if (m_handlers.lost)
        m_handlers.lost(why);
    scheduleReconnect();
}

void RedisConnection::scheduleReconnect()
{
    m_backoffMs = m_backoffMs == 0 ? m_options.reconnectMinMs : std::min(m_backoffMs * 2, m_options.reconnectMaxMs);
    m_reconnectTimer.start(m_backoffMs);
}

RedisReply RedisConnection::toReply(const redisReply *reply)
{
    RedisReply out;
    if (!reply)
        return RedisReply::error(QByteArrayLiteral("no reply"));
    switch (reply->type) {
    case REDIS_REPLY_ERROR:
        out.type = RedisReply::Type::Error;
        out.text = QByteArray(reply->str, qsizetype(reply->len));
        break;
    case REDIS_REPLY_STATUS:
        out.type = RedisReply::Type::Status;
        out.text = QByteArray(reply->str, qsizetype(reply->len));
        break;
    case REDIS_REPLY_STRING:
        out.type = RedisReply::Type::String;
        out.text = QByteArray(reply->str, qsizetype(reply->len));
        break;
    case REDIS_REPLY_INTEGER:
        out.type = RedisReply::Type::Integer;
        out.integer = reply->integer;
        break;
    case REDIS_REPLY_ARRAY:
        out.type = RedisReply::Type::Array;
        out.elements.reserve(reply->elements);
        for (size_t i = 0; i < reply->elements; ++i)
            out.elements.push_back(toReply(reply->element[i]));
        break;
    case REDIS_REPLY_NIL:
    default:
        out.type = RedisReply::Type::Nil;
        break;
    }
    return out;
}

} // namespace taxicore::redis
