#include "cluster/LiveViewWriter.h"

#include "cluster/FleetDelta.h"
#include "redis/RedisClient.h"
#include "redis/RedisReply.h"

#include <QDebug>
#include <QList>
#include <algorithm>

namespace taxicore {

using redis::RedisClient;
using redis::RedisReply;

LiveViewWriter::LiveViewWriter(QByteArray key, std::function<void()> wake)
    : m_key(std::move(key))
    , m_wake(std::move(wake))
{
}

void LiveViewWriter::write(RedisClient &redis, const std::vector<CarSnapshot> &cars)
{
    send(redis, cars, false);
}

void LiveViewWriter::send(RedisClient &redis, const std::vector<CarSnapshot> &cars, bool isRepair)
{
    if (cars.empty())
        return;
    QList<QByteArray> argv{QByteArrayLiteral("HSET"), m_key};
    argv.reserve(2 + 2 * qsizetype(cars.size()));
    std::vector<int> ids;
    ids.reserve(cars.size());
    for (const CarSnapshot &car : cars) {
        argv << QByteArray::number(car.id) << encodeCar(car);
        ids.push_back(car.id);
    }
    redis.command(std::move(argv),
                  [this, ids = std::move(ids), isRepair](const RedisReply &reply) { written(reply, ids, isRepair); });
}

bool LiveViewWriter::beginEpisode(Clock::time_point now, std::optional<Clock::time_point> &lastOfItsKind)
{
    if (m_broken)
        return false;
    m_broken = true;
    m_told = !lastOfItsKind || now - *lastOfItsKind >= std::chrono::milliseconds(kLogGapMs);
    if (m_told)
        lastOfItsKind = now;
    return m_told;
}

void LiveViewWriter::written(const RedisReply &reply, const std::vector<int> &ids, bool isRepair)
{
    if (reply.ok() && !isRepair)
        return; // the common case: no lock on the client's thread
    const auto now = Clock::now();
    QString line; // logged after the lock: a slow stderr must not hold up the flush thread
    bool failed = false;
    bool wake = false;
    {
        std::lock_guard lock(m_mutex);
        if (m_closed)
            return;
        if (isRepair)
            m_repairing = false;
        if (reply.ok()) {
            m_carsRepaired.fetch_add(ids.size(), std::memory_order_relaxed);
            m_gapMs = kRepairGapMs;
            if (!m_waiting.empty()) {
                m_nextRepair = now; // the next batch at once
                wake = true;
            } else if (m_broken) {
                if (m_told)
                    line = QStringLiteral("cluster: the live view %1 is whole again (written from this node's copy)")
                               .arg(QString::fromUtf8(m_key));
                m_broken = m_told = false;
            }
        } else {
            failed = true;
            if (!isRepair)
                m_carsMissed.fetch_add(ids.size(), std::memory_order_relaxed);
            m_waiting.insert(ids.begin(), ids.end());
            if (isRepair) {
                m_gapMs = std::min(2 * m_gapMs, kMaxRepairGapMs);
                m_nextRepair = now + std::chrono::milliseconds(m_gapMs);
            }
            if (beginEpisode(now, m_lastFailureTold))
                line = QStringLiteral("cluster: Redis did not take %1 cars' positions into the live view %2 (%3): "
                                      "they are written again from this node's copy, with pauses growing from %4 "
                                      "to %5 s, until it does (is Redis at its maxmemory?)")
                           .arg(ids.size())
                           .arg(QString::fromUtf8(m_key), QString::fromUtf8(reply.text))
                           .arg(kRepairGapMs / 1000)
                           .arg(kMaxRepairGapMs / 1000);
            wake = true;
        }
    }
    if (!line.isEmpty())
        (failed ? qWarning() : qInfo()).noquote() << line;
    if (wake && m_wake)
        m_wake();
}

void LiveViewWriter::noteMissing(const std::vector<QByteArray> &presentIds, int carCount)
{
    if (carCount <= 0)
        return;
    std::vector<char> present(std::size_t(carCount) + 1, 0);
    for (const QByteArray &field : presentIds) {
        bool ok = false;
        const int id = field.toInt(&ok);
        if (ok && id >= 1 && id <= carCount)
            present[std::size_t(id)] = 1;
    }
    int missing = 0;
    bool tell = false;
    {
        std::lock_guard lock(m_mutex);
        if (m_closed)
            return;
        for (int id = 1; id <= carCount; ++id)
            if (!present[std::size_t(id)] && m_waiting.insert(id).second)
                ++missing;
        if (missing == 0)
            return;
        tell = beginEpisode(Clock::now(), m_lastMissingTold);
    }
    // Also at a new cluster's first start, when no node wrote yet: information, not a warning.
    if (tell)
        qInfo().noquote() << QStringLiteral("cluster: the live view %1 lacks %2 of %3 cars (a new cluster, or Redis "
                                            "restarted, flushed or evicting keys): writing them from this node's copy")
                                 .arg(QString::fromUtf8(m_key))
                                 .arg(missing)
                                 .arg(carCount);
    if (m_wake)
        m_wake();
}

std::optional<LiveViewWriter::Clock::time_point> LiveViewWriter::repairDue() const
{
    std::lock_guard lock(m_mutex);
    if (m_waiting.empty() || m_repairing || m_closed)
        return std::nullopt;
    return m_nextRepair;
}

void LiveViewWriter::repair(RedisClient &redis, const CarSource &copy)
{
    std::vector<int> ids;
    {
        std::lock_guard lock(m_mutex);
        const auto now = Clock::now();
        if (m_waiting.empty() || m_repairing || m_closed || now < m_nextRepair)
            return;
        auto it = m_waiting.begin();
        while (it != m_waiting.end() && ids.size() < std::size_t(kRepairBatchCars)) {
            ids.push_back(*it);
            it = m_waiting.erase(it);
        }
        m_repairing = true;
        m_nextRepair = now + std::chrono::milliseconds(m_gapMs);
    }
    std::vector<CarSnapshot> cars;
    cars.reserve(ids.size());
    for (const int id : ids)
        if (auto car = copy(id))
            cars.push_back(std::move(*car));
    if (!cars.empty()) {
        send(redis, cars, true);
        return;
    }
    {
        std::lock_guard lock(m_mutex); // none of them is in the copy: nothing to write
        m_repairing = false;
        m_nextRepair = Clock::now();
        if (m_waiting.empty())
            m_broken = m_told = false;
    }
    if (m_wake)
        m_wake();
}

void LiveViewWriter::close()
{
    std::lock_guard lock(m_mutex);
    m_closed = true;
}

} // namespace taxicore
