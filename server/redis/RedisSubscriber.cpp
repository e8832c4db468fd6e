#include "redis/RedisSubscriber.h"

#include "redis/RedisConnection.h"

#include <hiredis/async.h>

#include <QCoreApplication>
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
        QObject::connect(&m_pingTimer, &QTimer::timeout, [this] { probe(); });
        m_clock.start();
        m_connection.open();
    }

    ~Core() { m_shared->subscribed = false; }

private:
    void onReady()
    {
        m_confirmed = 0;
        m_probeConfirmed = false;
        // SUBSCRIBE the channels and PSUBSCRIBE the liveness probe in one go; one callback for
        // everything this connection receives (onReceived).
        QList<QByteArray> subscribe{QByteArrayLiteral("SUBSCRIBE")};
        subscribe += m_shared->channels;
        const bool sent = (m_shared->channels.isEmpty() || m_connection.send(subscribe, &Core::receivedCallback, this))
                          && sendProbe();
        if (!sent) {
            m_connection.drop(QByteArrayLiteral("SUBSCRIBE refused by hiredis"));
            return;
        }
        // The SUBSCRIBE counts as a probe: a server that accepted the connection but does not
        // answer (stopped, stuck) is dropped after pingDeadlineMs instead of waited for forever.
        m_pingTimer.start(m_shared->options.pingIntervalMs);
    }

    // The liveness probe is a PSUBSCRIBE of a pattern no channel is named after, not a PING:
    // hiredis 0.14 routes the answer to a PING on a subscribed connection by its first element
    // ("pong" starts with 'p', so it looks for a pattern subscription named after the PING's
    // argument), loses it when there is none, and keeps every such PING's callback until the
    // connection closes. A repeated PSUBSCRIBE of the same pattern is answered each time, goes to
    // this pattern's callback, and replaces its entry instead of adding one.
    bool sendProbe()
    {
        if (!m_connection.send({QByteArrayLiteral("PSUBSCRIBE"), m_probePattern}, &Core::receivedCallback, this))
            return false;
        if (m_probeSentMs < 0)
            m_probeSentMs = m_clock.elapsed();
        return true;
    }

    void onLost()
    {
        m_shared->subscribed = false;
        m_pingTimer.stop();
        m_probeSentMs = -1;
    }

    static void receivedCallback(redisAsyncContext *context, void *reply, void *privdata)
    {
        static_cast<Core *>(privdata)->onReceived(context, static_cast<const redisReply *>(reply));
    }

    // Every reply proves the connection alive; its first element says what it is.
    void onReceived(const redisAsyncContext *context, const redisReply *reply)
    {
        if (!reply || context == nullptr)
            return; // the connection went; onLost handles it
        m_probeSentMs = -1;
        if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 2 || reply->element[0]->type != REDIS_REPLY_STRING)
            return;
        const QByteArray kind(reply->element[0]->str, qsizetype(reply->element[0]->len));
        if (kind == "message" && reply->elements >= 3) {
            const redisReply *channel = reply->element[1];
            const redisReply *payload = reply->element[2];
            if (m_shared->onMessage)
                m_shared->onMessage(QByteArray(channel->str, qsizetype(channel->len)),
                                    QByteArray(payload->str, qsizetype(payload->len)));
        } else if (kind == "subscribe") {
            ++m_confirmed;
            checkSubscribed();
        } else if (kind == "psubscribe") {
            m_probeConfirmed = true;
            checkSubscribed();
        }
    }

    void checkSubscribed()
    {
        if (m_shared->subscribed || !m_probeConfirmed || m_confirmed < m_shared->channels.size())
            return;
        m_shared->subscribed = true;
        ++m_shared->subscribes;
        if (m_shared->onSubscribed)
            m_shared->onSubscribed();
    }

    void probe()
    {
        if (!m_connection.isReady())
            return;
        if (m_probeSentMs >= 0) {
            if (m_clock.elapsed() - m_probeSentMs >= m_shared->options.pingDeadlineMs)
                m_connection.drop(QByteArrayLiteral("no answer to the liveness probe within ")
                                  + QByteArray::number(m_shared->options.pingDeadlineMs) + " ms");
            return;
        }
        if (m_shared->subscribed && !sendProbe())
            m_connection.drop(QByteArrayLiteral("liveness probe refused by hiredis"));
    }

    static QByteArray probePattern()
    {
        // Unique per subscriber, so two subscribers' probes never look alike; no glob characters.
        static std::atomic<quint64> counter{0};
        return QByteArrayLiteral("taxicore:redis:liveness:") + QByteArray::number(QCoreApplication::applicationPid())
               + ':' + QByteArray::number(++counter);
    }

    std::shared_ptr<Shared> m_shared;
    RedisConnection m_connection;
    const QByteArray m_probePattern = probePattern();
    QTimer m_pingTimer;
    QElapsedTimer m_clock;
    qint64 m_probeSentMs = -1; // a probe (or the SUBSCRIBE) awaits its answer since then
    qsizetype m_confirmed = 0; // channels confirmed on this connection
    bool m_probeConfirmed = false;
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
