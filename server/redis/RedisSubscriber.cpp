#include "redis/RedisSubscriber.h"

#include "redis/RedisConnection.h"

#include <hiredis/async.h>

#include <QElapsedTimer>
#include <QSemaphore>
#include <QThread>
#include <QTimer>
#include <atomic>

namespace taxicore::redis {

struct RedisSubscriber::Shared {
    RedisEndpoint endpoint;
    QList<QByteArray> channels;
    MessageFn onMessage;
    std::function<void()> onSubscribed;
    RedisClientOptions options;
    std::atomic<bool> subscribed{false};
    std::atomic<std::uint64_t> subscribes{0};
};

// Lives on the subscriber's thread.
class RedisSubscriber::Core {
public:
    explicit Core(std::shared_ptr<Shared> shared)
        : m_shared(std::move(shared))
        , m_connection(m_shared->endpoint, m_shared->options,
                       RedisConnection::Handlers{[this] { onReady(); }, [this](const QByteArray &) { onLost(); }})
    {
        QObject::connect(&m_pingTimer, &QTimer::timeout, [this] { ping(); });
        m_clock.start();
        m_connection.open();
    }

    ~Core() { m_shared->subscribed = false; }

private:
    void onReady()
    {
        m_confirmed = 0;
        m_pingSentMs = -1;
        if (m_shared->channels.isEmpty()) {
            onSubscribedAll();
            m_pingTimer.start(m_shared->options.pingIntervalMs);
            return;
        }
        QList<QByteArray> argv{QByteArrayLiteral("SUBSCRIBE")};
        argv += m_shared->channels;
        // One callback for everything this connection receives (see onReceived).
        if (!m_connection.send(argv, &Core::receivedCallback, this)) {
            m_connection.drop(QByteArrayLiteral("SUBSCRIBE refused by hiredis"));
            return;
        }
        // The SUBSCRIBE counts as a PING: a server that accepted the connection but does not
        // answer (stopped, stuck) is dropped after pingDeadlineMs instead of waited for forever.
        m_pingSentMs = m_clock.elapsed();
        m_pingTimer.start(m_shared->options.pingIntervalMs);
    }

    void onLost()
    {
        m_shared->subscribed = false;
        m_pingTimer.stop();
    }

    static void receivedCallback(redisAsyncContext *context, void *reply, void *privdata)
    {
        static_cast<Core *>(privdata)->onReceived(context, static_cast<const redisReply *>(reply));
    }

    // hiredis 0.14 hands a pub/sub message to a pending PING's callback when the message arrives
    // first, so the PING and the SUBSCRIBE callbacks share this one function and the reply's own
    // kind ("message", "subscribe", "pong") decides what it is. Anything received proves the
    // connection alive.
    void onReceived(const redisAsyncContext *context, const redisReply *reply)
    {
        if (!reply || context == nullptr)
            return; // the connection went; onLost handles it
        m_pingSentMs = -1;
        if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 1 || reply->element[0]->type != REDIS_REPLY_STRING)
            return;
        const QByteArray kind(reply->element[0]->str, qsizetype(reply->element[0]->len));
        if (kind == "message" && reply->elements >= 3) {
            const redisReply *channel = reply->element[1];
            const redisReply *payload = reply->element[2];
            if (m_shared->onMessage)
                m_shared->onMessage(QByteArray(channel->str, qsizetype(channel->len)),
                                    QByteArray(payload->str, qsizetype(payload->len)));
        } else if (kind == "subscribe") {
            if (++m_confirmed == m_shared->channels.size())
                onSubscribedAll();
        }
    }

    void onSubscribedAll()
    {
        m_shared->subscribed = true;
        ++m_shared->subscribes;
        if (m_shared->onSubscribed)
            m_shared->onSubscribed();
    }

    void ping()
    {
        if (!m_connection.isReady())
            return;
        if (m_pingSentMs >= 0) {
            if (m_clock.elapsed() - m_pingSentMs >= m_shared->options.pingDeadlineMs)
                m_connection.drop(QByteArrayLiteral("no answer to PING within ")
                                  + QByteArray::number(m_shared->options.pingDeadlineMs) + " ms");
            return;
        }
        if (!m_shared->subscribed)
            return;
        if (m_connection.send({QByteArrayLiteral("PING")}, &Core::receivedCallback, this))
            m_pingSentMs = m_clock.elapsed();
    }

    std::shared_ptr<Shared> m_shared;
    RedisConnection m_connection;
    QTimer m_pingTimer;
    QElapsedTimer m_clock;
    qint64 m_pingSentMs = -1; // a PING awaits its answer since then
    qsizetype m_confirmed = 0;
};

class RedisSubscriber::Thread : public QThread {
public:
    explicit Thread(std::shared_ptr<Shared> shared)
        : m_shared(std::move(shared))
    {
    }

protected:
    void run() override
    {
        Core core(m_shared);
        exec();
    }

private:
    std::shared_ptr<Shared> m_shared;
};

RedisSubscriber::RedisSubscriber(RedisEndpoint endpoint, QList<QByteArray> channels, MessageFn onMessage,
                                 std::function<void()> onSubscribed, RedisClientOptions options)
    : m_shared(std::make_shared<Shared>())
{
    m_shared->endpoint = std::move(endpoint);
    m_shared->channels = std::move(channels);
    m_shared->onMessage = std::move(onMessage);
    m_shared->onSubscribed = std::move(onSubscribed);
    m_shared->options = options;
    m_thread = std::make_unique<Thread>(m_shared);
    m_thread->setObjectName(QStringLiteral("taxicore-redis-sub"));
    m_thread->start();
}

RedisSubscriber::~RedisSubscriber()
{
    m_thread->quit();
    m_thread->wait();
}

bool RedisSubscriber::isSubscribed() const
{
    return m_shared->subscribed;
}

std::uint64_t RedisSubscriber::resubscribes() const
{
    const std::uint64_t subscribes = m_shared->subscribes;
    return subscribes == 0 ? 0 : subscribes - 1;
}

} // namespace taxicore::redis
