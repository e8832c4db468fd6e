#include "cluster/LiveViewWriter.h"

#include "cluster/FleetDelta.h"
#include "redis/RedisClient.h"
#include "redis/RedisReply.h"

#include <QDebug>
#include <QList>

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
    redis.command(std::move(argv), [this, ids = std::move(ids), isRepair](const RedisReply &reply) {
        written(reply, ids, isRepair);
    });
}

void LiveViewWriter::written(const RedisReply &reply, const std::vector<int> &ids, bool isRepair)
{
    if (reply.ok() && !isRepair)
        return; // the common case: no lock on the client's thread
    bool wake = false;
    {
        std::lock_guard lock(m_mutex);
        if (m_closed)
            return;
        if (isRepair)
            m_repairing = false;
        if (reply.ok()) {
            m_carsRepaired.fetch_add(ids.size(), std::memory_order_relaxed);
            if (m_waiting.empty()) {
                qInfo().noquote() << QStringLiteral("cluster: the live view %1 is whole again (the last repair wrote "
                                                    "%2 cars from this node's copy)")
                                         .arg(QString::fromUtf8(m_key))
                                         .arg(ids.size());
                m_failure.clear();
            }
            wake = !m_waiting.empty(); // more failed while this repair was out
        } else {
            m_carsMissed.fetch_add(ids.size(), std::memory_order_relaxed);
            m_waiting.insert(ids.begin(), ids.end());
            if (m_failure.isEmpty()) {
                m_failure = reply.text;
                qWarning().noquote() << QStringLiteral("cluster: Redis did not take the positions of %1 cars into the "
                                                       "live view %2 (%3): they are written again from this node's "
                                                       "copy every %4 ms until it does (is Redis at its maxmemory?)")
                                            .arg(ids.size())
                                            .arg(QString::fromUtf8(m_key), QString::fromUtf8(reply.text))
                                            .arg(kRepairGapMs);
            }
            wake = true;
        }
    }
    if (wake && m_wake)
        m_wake();
}

void LiveViewWriter::noteMissing(const std::vector<QByteArray> &presentIds, int carCount)
{
    std::vector<char> present(std::size_t(carCount) + 1, 0);
    for (const QByteArray &field : presentIds) {
        bool ok = false;
        const int id = field.toInt(&ok);
        if (ok && id >= 1 && id <= carCount)
            present[std::size_t(id)] = 1;
    }
    int missing = 0;
    {
        std::lock_guard lock(m_mutex);
        if (m_closed)
            return;
        for (int id = 1; id <= carCount; ++id)
            if (!present[std::size_t(id)] && m_waiting.insert(id).second)
                ++missing;
        if (missing == 0)
            return;
        if (m_failure.isEmpty())
            m_failure = QByteArrayLiteral("cars missing from the view");
    }
    // Also at a new cluster's first start, when no node wrote yet: not worth a warning.
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
    return m_lastRepair + std::chrono::milliseconds(kRepairGapMs);
}

void LiveViewWriter::repair(RedisClient &redis, const CarSource &copy)
{
    std::vector<int> ids;
    {
        std::lock_guard lock(m_mutex);
        const auto now = Clock::now();
        if (m_waiting.empty() || m_repairing || m_closed
            || now < m_lastRepair + std::chrono::milliseconds(kRepairGapMs))
            return;
        ids.assign(m_waiting.begin(), m_waiting.end());
        m_waiting.clear();
        m_repairing = true;
        m_lastRepair = now;
    }
    std::vector<CarSnapshot> cars;
    cars.reserve(ids.size());
    for (const int id : ids)
        if (auto car = copy(id))
            cars.push_back(std::move(*car));
    if (cars.empty()) {
        std::lock_guard lock(m_mutex);
        m_repairing = false;
        return;
    }
    send(redis, cars, true);
}

void LiveViewWriter::close()
{
    std::lock_guard lock(m_mutex);
    m_closed = true;
}

} // namespace taxicore
