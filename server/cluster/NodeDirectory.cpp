#include "cluster/NodeDirectory.h"

#include "redis/RedisClient.h"

#include <QDateTime>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QSysInfo>
#include <algorithm>
#include <chrono>
#include <cmath>

namespace taxicore {

namespace {

// At a publisher's stop, how long deleting its entry may take (Redis away: it goes stale instead).
constexpr int kLeaveWaitMs = 500;

qint64 steadyMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// TIME answers [seconds, microseconds] as strings; -1 when the reply is not that.
qint64 redisTimeMs(const redis::RedisReply &reply)
{
    if (reply.type != redis::RedisReply::Type::Array || reply.elements.size() != 2)
        return -1;
    bool secondsOk = false, microsOk = false;
    const qint64 seconds = reply.elements[0].text.toLongLong(&secondsOk);
    const qint64 micros = reply.elements[1].text.toLongLong(&microsOk);
    return secondsOk && microsOk ? seconds * 1000 + micros / 1000 : -1;
}

QString replyError(const redis::RedisReply &reply, const char *command)
{
    return reply.type == redis::RedisReply::Type::Error
               ? QString::fromUtf8(reply.text)
               : QStringLiteral("unexpected answer to %1").arg(QLatin1StringView(command));
}

} // namespace

NodeDirectory::NodeDirectory(Identity identity, const QString &fleetUrl, std::function<NodeStatus()> sample, Role role)
    : m_identity(std::move(identity))
    , m_sample(std::move(sample))
    , m_role(role)
    , m_startedMs(QDateTime::currentMSecsSinceEpoch())
    , m_instance(QString::number(QRandomGenerator::system()->generate64(), 16))
{
    if (const auto endpoint = redis::parseRedisUrl(fleetUrl, nullptr))
        m_redis = std::make_unique<redis::RedisClient>(*endpoint);
    m_thread = std::thread([this] { run(); });
}

NodeDirectory::~NodeDirectory()
{
    {
        std::lock_guard lock(m_mutex);
        m_stopping = true;
    }
    m_wake.notify_all();
    m_thread.join();
    if (m_redis && m_role == Role::Publisher && !m_nameTaken) // never the entry of the node holding our name
        m_redis->commandAndWait({"HDEL", kHashKey, m_identity.name.toUtf8()}, kLeaveWaitMs);
}

QString NodeDirectory::healthFor(qint64 ageMs)
{
    if (ageMs <= kUpWithinMs)
        return QStringLiteral("up");
    if (ageMs <= kDropAfterMs)
        return QStringLiteral("stale");
    return {};
}

QString NodeDirectory::defaultName(quint16 port)
{
    return QStringLiteral("%1:%2").arg(QSysInfo::machineHostName()).arg(port);
}

void NodeDirectory::run()
{
    std::unique_lock lock(m_mutex);
    while (!m_stopping) {
        lock.unlock();
        beat();
        lock.lock();
        m_wake.wait_for(lock, std::chrono::milliseconds(kHeartbeatMs), [this] { return m_stopping; });
    }
}

void NodeDirectory::beat()
{
    // In a cluster, updated_ms is Redis' clock (TIME), and so is the reader's "now": every node's
    // age is measured on one clock, so hosts whose clocks disagree by seconds (no NTP) still see
    // each other "up". Outside a cluster the node's own wall clock serves.
    qint64 nowMs = QDateTime::currentMSecsSinceEpoch();
    QString error;
    std::shared_ptr<HeartbeatReply> written; // the heartbeat's answer, in by the time HGETALL's is
    if (m_redis) {
        const redis::RedisReply time = m_redis->commandAndWait({"TIME"}, kRedisWaitMs);
        nowMs = redisTimeMs(time);
        if (nowMs < 0)
            error = QStringLiteral("the node directory in Redis could not be read: %1").arg(replyError(time, "TIME"));
    }
    const bool localSelf = !(m_redis && m_role == Role::Reader);
    if (localSelf) {
        const QJsonObject self = selfRecord(nowMs < 0 ? QDateTime::currentMSecsSinceEpoch() : nowMs);
        {
            std::lock_guard lock(m_mutex);
            m_self = self;
            m_selfSteadyMs = steadyMs();
        }
        if (m_redis && m_role == Role::Publisher && nowMs >= 0) {
            const QString takenBy = nameTakenBy(nowMs);
            if (takenBy.isEmpty())
                written = sendHeartbeat(self);
            else
                error = takenBy;
        }
    }
    if (!m_redis)
        return;
    if (error.isEmpty()) {
        const redis::RedisReply all = m_redis->commandAndWait({"HGETALL", kHashKey}, kRedisWaitMs);
        if (all.type != redis::RedisReply::Type::Array) {
            error = QStringLiteral("the node directory in Redis could not be read: %1").arg(replyError(all, "HGETALL"));
        } else {
            QJsonArray others;
            for (size_t i = 0; i + 1 < all.elements.size(); i += 2) {
                const QByteArray &name = all.elements[i].text;
                if (localSelf && name == m_identity.name.toUtf8())
                    continue; // this node's own record is the local one, always fresh
                const QJsonObject record = QJsonDocument::fromJson(all.elements[i + 1].text).object();
                const qint64 updatedMs = qint64(record.value(QStringLiteral("updated_ms")).toDouble(-1));
                if (record.isEmpty() || updatedMs < 0)
                    continue; // not a heartbeat this version wrote: left alone
                if (nowMs - updatedMs > kDropAfterMs) {
                    m_redis->command({"HDEL", kHashKey, name}); // gone: whoever sees it that old deletes it
                    continue;
                }
                others.append(record);
            }
            std::lock_guard lock(m_mutex);
            m_others = others;
            m_readRedisMs = nowMs;
            m_readSteadyMs = steadyMs();
        }
    }
    // On failure the previous read stays: its nodes age on the steady clock and go stale, then away.
    const QString writeError = heartbeatRefusal(written);
    if (error.isEmpty())
        error = writeError;
    std::lock_guard lock(m_mutex);
    // Said once when it starts, and a refused heartbeat at most every kWarnGapMs (a Redis at its
    // memory limit may refuse every other one).
    const qint64 now = steadyMs();
    const bool warnAgain = m_lastRefusalWarnedMs < 0 || now - m_lastRefusalWarnedMs >= kWarnGapMs;
    if (!writeError.isEmpty() && error != m_directoryError && warnAgain) {
        m_lastRefusalWarnedMs = now;
        qWarning("%s", qPrintable(error));
    } else if (m_nameTaken && error != m_directoryError) {
        qWarning("%s", qPrintable(error));
    }
    m_directoryError = error;
}

std::shared_ptr<NodeDirectory::HeartbeatReply> NodeDirectory::sendHeartbeat(const QJsonObject &self)
{
    // Its answer is kept, not dropped: a Redis that is full (maxmemory) refuses it, and the other
    // nodes would only see this one go stale, with nobody told why. Not waited for: the HGETALL
    // sent next on the same connection is answered after it, so its answer is in by then.
    auto written = std::make_shared<HeartbeatReply>();
    m_redis->command({"HSET", kHashKey, m_identity.name.toUtf8(), QJsonDocument(self).toJson(QJsonDocument::Compact)},
                     [written](const redis::RedisReply &reply) {
                         std::lock_guard lock(written->mutex);
                         written->reply = reply;
                     });
    return written;
}

QString NodeDirectory::heartbeatRefusal(const std::shared_ptr<HeartbeatReply> &written)
{
    if (!written)
        return {};
    std::lock_guard lock(written->mutex);
    // No answer yet (the directory read timed out): that read's error says what matters.
    if (!written->reply || written->reply->ok())
        return {};
    return QStringLiteral("Redis did not take this node's heartbeat, so the other nodes see it go stale: %1")
        .arg(replyError(*written->reply, "HSET"));
}

QString NodeDirectory::nameTakenBy(qint64 nowMs)
{
    const redis::RedisReply held = m_redis->commandAndWait({"HGET", kHashKey, m_identity.name.toUtf8()}, kRedisWaitMs);
    const QJsonObject record = QJsonDocument::fromJson(held.text).object();
    const QString instance = record.value(QStringLiteral("instance")).toString();
    const qint64 updatedMs = qint64(record.value(QStringLiteral("updated_ms")).toDouble(-1));
    m_nameTaken = held.type == redis::RedisReply::Type::String && !instance.isEmpty() && instance != m_instance
                  && updatedMs >= 0 && nowMs - updatedMs <= kUpWithinMs;
    if (!m_nameTaken)
        return {};
    return QStringLiteral("another node (%1) is called %2 in this cluster: this node is not listed until the name "
                          "is free; give each node its own --node-name")
        .arg(record.value(QStringLiteral("url")).toString(), m_identity.name);
}

QJsonObject NodeDirectory::selfRecord(qint64 updatedMs)
{
    const NodeStatus status = m_sample ? m_sample() : NodeStatus{};
    const qint64 now = steadyMs();
    double perSecond = 0;
    if (m_lastSampleSteadyMs >= 0 && now > m_lastSampleSteadyMs && status.requestsServed >= m_lastRequests)
        perSecond = double(status.requestsServed - m_lastRequests) * 1000.0 / double(now - m_lastSampleSteadyMs);
    m_lastRequests = status.requestsServed;
    m_lastSampleSteadyMs = now;
    return {
        {QStringLiteral("name"), m_identity.name},   {QStringLiteral("url"), m_identity.url},
        {QStringLiteral("mode"), status.mode},       {QStringLiteral("workers"), status.workers},
        {QStringLiteral("threads"), status.threads}, {QStringLiteral("req_per_s"), std::round(perSecond * 10) / 10},
        {QStringLiteral("leader"), status.leader},   {QStringLiteral("ledger_ok"), status.ledgerOk},
        {QStringLiteral("started_ms"), m_startedMs}, {QStringLiteral("updated_ms"), updatedMs},
        {QStringLiteral("instance"), m_instance},
    };
}

QJsonObject NodeDirectory::snapshot() const
{
    std::lock_guard lock(m_mutex);
    const qint64 now = steadyMs();
    QList<QJsonObject> nodes;
    if (!m_self.isEmpty()) {
        QJsonObject self = m_self;
        self.insert(QStringLiteral("health"), QStringLiteral("up"));
        self.insert(QStringLiteral("age_ms"), now - m_selfSteadyMs);
        nodes.append(self);
    }
    for (const QJsonValue value : m_others) {
        QJsonObject node = value.toObject();
        const qint64 ageMs =
            std::max<qint64>(0, m_readRedisMs - qint64(node.value(QStringLiteral("updated_ms")).toDouble()))
            + (now - m_readSteadyMs);
        const QString health = healthFor(ageMs);
        if (health.isEmpty())
            continue;
        node.insert(QStringLiteral("health"), health);
        node.insert(QStringLiteral("age_ms"), ageMs);
        nodes.append(node);
    }
    std::sort(nodes.begin(), nodes.end(), [](const QJsonObject &a, const QJsonObject &b) {
        return a.value(QStringLiteral("name")).toString() < b.value(QStringLiteral("name")).toString();
    });
    QJsonArray list;
    for (const QJsonObject &node : nodes)
        list.append(node);
    QJsonObject answer{{QStringLiteral("cluster"), inCluster()}, {QStringLiteral("nodes"), list}};
    if (!m_directoryError.isEmpty())
        answer.insert(QStringLiteral("directory_error"), m_directoryError);
    return answer;
}

} // namespace taxicore
