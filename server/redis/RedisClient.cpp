#include "redis/RedisClient.h"

#include "redis/RedisConnection.h"

#include <hiredis/async.h>

#include <QMutex>
#include <QObject>
#include <QSemaphore>
#include <QThread>
#include <QTimer>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>

namespace taxicore::redis {

namespace {

qint64 nowMs()
{
    using namespace std::chrono;
    return duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
}

// How often waiting and sent commands are checked against commandTimeoutMs: a fraction of it,
// so a command fails at most ~25 % late, and never more often than every 10 ms.
int sweepIntervalMs(int commandTimeoutMs)
{
    return std::clamp(commandTimeoutMs / 4, 10, 100);
}

bool takesConnectionOver(const QList<QByteArray> &argv)
{
    if (argv.isEmpty())
        return false;
    const QByteArray name = argv.front().toLower();
    return name == "subscribe" || name == "psubscribe" || name == "monitor" || name == "ssubscribe";
}

struct Request {
    QList<QByteArray> argv;
    RedisClient::Done done;
    qint64 acceptedMs = 0;
    bool refused = false; // failed at once (queue full, or a command this client does not take)
    QByteArray refusal;
};

} // namespace

// What callers on any thread and the client's thread share.
struct RedisClient::Shared {
    RedisEndpoint endpoint;
    RedisClientOptions options;
    QByteArray name; // "redis host:port", the start of every error this client writes

    std::mutex mutex;
    std::deque<Request> incoming; // guarded by mutex
    bool wakePosted = false;      // guarded by mutex: a drain is queued on the client's thread
    bool closing = false;         // guarded by mutex: the thread is stopping, take nothing more
    QObject *core = nullptr;      // guarded by mutex (valid while !closing)

    std::atomic<bool> connected{false};
    std::atomic<int> outstanding{0}; // accepted and not answered yet
    std::atomic<std::uint64_t> sent{0}, failed{0}, dropped{0}, reconnects{0};

    QByteArray unavailable(const QByteArray &why) const
    {
        if (why.startsWith("timed out"))
            return name + ' ' + why;
        return name + " is unavailable: " + why;
    }
};

// Lives on the client's thread: the connection, the commands waiting for it, the ones in flight.
class RedisClient::Core : public QObject {
public:
    explicit Core(std::shared_ptr<Shared> shared)
        : m_shared(std::move(shared))
        , m_connection(std::make_unique<RedisConnection>(
              m_shared->endpoint, m_shared->options,
              RedisConnection::Handlers{[this] { onReady(); }, [this](const QByteArray &) { onLost(); }}))
    {
        QObject::connect(&m_sweep, &QTimer::timeout, this, [this] { sweep(); });
        m_sweep.start(sweepIntervalMs(m_shared->options.commandTimeoutMs));
        m_connection->open();
    }

    void drain()
    {
        std::deque<Request> batch;
        {
            std::lock_guard lock(m_shared->mutex);
            m_shared->wakePosted = false;
            batch.swap(m_shared->incoming);
        }
        for (Request &request : batch) {
            if (request.refused) {
                if (request.done)
                    request.done(RedisReply::error(std::move(request.refusal)));
            } else if (m_connection->isReady()) {
                sendNow(std::move(request));
            } else {
                m_waiting.push_back(std::move(request));
            }
        }
    }

    // After the event loop stopped: everything not answered gets its Error, on this thread.
    void shutdown()
    {
        std::deque<Request> batch;
        {
            std::lock_guard lock(m_shared->mutex);
            m_shared->closing = true;
            m_shared->core = nullptr;
            batch.swap(m_shared->incoming);
        }
        m_sweep.stop();
        const QByteArray closed = m_shared->name + " client closed before the reply";
        for (Request &request : batch) {
            if (request.refused)
                finishRefused(request);
            else
                fail(request.done, closed);
        }
        while (!m_waiting.empty()) {
            Request request = std::move(m_waiting.front());
            m_waiting.pop_front();
            fail(request.done, closed);
        }
        m_connection.reset(); // in-flight commands get their Error through replyCallback
        m_shared->connected = false;
    }

private:
    struct InFlight {
        RedisClient::Done done;
        qint64 sentMs = 0;
    };

    void sendNow(Request request)
    {
        m_inFlight.push_back({std::move(request.done), nowMs()});
        if (m_connection->send(request.argv, &Core::replyCallback, this)) {
            ++m_shared->sent;
            return;
        }
        InFlight refused = std::move(m_inFlight.back());
        m_inFlight.pop_back();
        fail(refused.done, m_shared->name + " refused the command before sending it (hiredis)");
    }

    static void replyCallback(redisAsyncContext *context, void *reply, void *privdata)
    {
        auto *self = static_cast<Core *>(privdata);
        self->onReply(context, static_cast<const redisReply *>(reply));
    }

    void onReply(const redisAsyncContext *context, const redisReply *reply)
    {
        if (m_inFlight.empty())
            return; // cannot happen: hiredis calls back once per command, in order
        InFlight entry = std::move(m_inFlight.front());
        m_inFlight.pop_front();
        if (!reply) {
            // No connection while shutdown() resets it: the client is closing, not Redis away.
            fail(entry.done, m_connection ? m_shared->unavailable(m_connection->lossReason(context))
                                          : m_shared->name + " client closed before the reply");
            return;
        }
        --m_shared->outstanding;
        if (entry.done)
            entry.done(RedisConnection::toReply(reply));
    }

    void fail(const RedisClient::Done &done, const QByteArray &text)
    {
        --m_shared->outstanding;
        ++m_shared->failed;
        if (done)
            done(RedisReply::error(text));
    }

    void finishRefused(Request &request)
    {
        if (request.done)
            request.done(RedisReply::error(std::move(request.refusal)));
    }

    void onReady()
    {
        m_shared->connected = true;
        m_shared->reconnects = m_connection->reconnects();
        std::deque<Request> waiting;
        waiting.swap(m_waiting);
        for (Request &request : waiting)
            sendNow(std::move(request));
    }

    void onLost() { m_shared->connected = false; }

    void sweep()
    {
        const qint64 now = nowMs();
        const int timeoutMs = m_shared->options.commandTimeoutMs;
        while (!m_waiting.empty() && now - m_waiting.front().acceptedMs >= timeoutMs) {
            Request request = std::move(m_waiting.front());
            m_waiting.pop_front();
            const QByteArray why =
                m_connection->lastError().isEmpty() ? QByteArrayLiteral("still connecting") : m_connection->lastError();
            fail(request.done, m_shared->unavailable(why));
        }
        // A sent command without an answer for that long: the server or the path is stuck. Only
        // dropping the connection frees hiredis' callbacks; every command in flight fails with it.
        if (!m_inFlight.empty() && now - m_inFlight.front().sentMs >= timeoutMs)
            m_connection->drop(QByteArrayLiteral("timed out after ") + QByteArray::number(timeoutMs) + " ms");
    }

    std::shared_ptr<Shared> m_shared;
    std::unique_ptr<RedisConnection> m_connection;
    std::deque<Request> m_waiting;
    std::deque<InFlight> m_inFlight;
    QTimer m_sweep;
};

// The client's thread: builds the Core on itself, runs its loop, and tears it down there.
class RedisClient::Thread : public QThread {
public:
    explicit Thread(std::shared_ptr<Shared> shared)
        : m_shared(std::move(shared))
    {
    }

    void startAndWait()
    {
        start();
        m_started.acquire();
    }

protected:
    void run() override
    {
        Core core(m_shared);
        {
            std::lock_guard lock(m_shared->mutex);
            m_shared->core = &core;
        }
        m_started.release();
        exec();
        core.shutdown();
    }

private:
    std::shared_ptr<Shared> m_shared;
    QSemaphore m_started;
};

RedisClient::RedisClient(RedisEndpoint endpoint, RedisClientOptions options)
    : m_shared(std::make_shared<Shared>())
{
    m_shared->endpoint = std::move(endpoint);
    m_shared->options = options;
    m_shared->name = "redis " + m_shared->endpoint.display().toUtf8();
    m_thread = std::make_unique<Thread>(m_shared);
    m_thread->setObjectName(QStringLiteral("taxicore-redis"));
    m_thread->startAndWait();
}

RedisClient::~RedisClient()
{
    m_thread->quit();
    m_thread->wait();
}

void RedisClient::command(QList<QByteArray> argv, Done done)
{
    Request request{std::move(argv), std::move(done), nowMs(), false, {}};
    if (request.argv.isEmpty()) {
        request.refused = true;
        request.refusal = m_shared->name + ": empty command";
    } else if (takesConnectionOver(request.argv)) {
        request.refused = true;
        request.refusal =
            m_shared->name + ": " + request.argv.front() + " takes the connection over; use RedisSubscriber";
    } else if (m_shared->outstanding.fetch_add(1) >= m_shared->options.maxQueued) {
        --m_shared->outstanding;
        ++m_shared->dropped;
        request.refused = true;
        request.refusal = m_shared->name + " is overloaded: " + QByteArray::number(m_shared->options.maxQueued)
                          + " commands already waiting; command dropped";
    }
    std::unique_lock lock(m_shared->mutex);
    if (m_shared->closing) {
        lock.unlock();
        if (!request.refused)
            --m_shared->outstanding;
        if (request.done)
            request.done(RedisReply::error(m_shared->name + " client closed"));
        return;
    }
    m_shared->incoming.push_back(std::move(request));
    if (!m_shared->wakePosted) {
        m_shared->wakePosted = true;
        // Posted under the lock: shutdown() clears `core` under it before the Core goes away.
        auto *core = static_cast<Core *>(m_shared->core);
        QMetaObject::invokeMethod(
            core, [core] { core->drain(); }, Qt::QueuedConnection);
    }
}

RedisReply RedisClient::commandAndWait(QList<QByteArray> argv, int timeoutMs)
{
    if (QThread::currentThread() == m_thread.get())
        return RedisReply::error(m_shared->name + ": commandAndWait on the client's own thread would deadlock");
    struct Waiter {
        std::mutex mutex;
        std::condition_variable answered;
        bool done = false;
        RedisReply reply;
    };
    auto waiter = std::make_shared<Waiter>();
    command(std::move(argv), [waiter](const RedisReply &reply) {
        std::lock_guard lock(waiter->mutex);
        waiter->reply = reply;
        waiter->done = true;
        waiter->answered.notify_all();
    });
    std::unique_lock lock(waiter->mutex);
    if (!waiter->answered.wait_for(lock, std::chrono::milliseconds(timeoutMs), [&] { return waiter->done; }))
        return RedisReply::error(m_shared->name + " timed out after " + QByteArray::number(timeoutMs) + " ms");
    return std::move(waiter->reply);
}

bool RedisClient::isConnected() const
{
    return m_shared->connected;
}

RedisClientStats RedisClient::stats() const
{
    return {m_shared->sent, m_shared->failed, m_shared->dropped, m_shared->reconnects};
}

const RedisEndpoint &RedisClient::endpoint() const
{
    return m_shared->endpoint;
}

const RedisClientOptions &RedisClient::options() const
{
    return m_shared->options;
}

} // namespace taxicore::redis
