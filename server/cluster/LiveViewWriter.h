#pragma once

#include "fleet/FleetTypes.h"

#include <QByteArray>
#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <unordered_set>
#include <vector>

namespace taxicore {

namespace redis {
class RedisClient;
struct RedisReply;
} // namespace redis

// A node's writes of car positions into the shared live view, the Redis hash taxicore:cars
// (ClusterFleet::kCarsKey), and their repair. The view is what a node loads when it (re)subscribes,
// so a write Redis did not take leaves a car where it was for every node that starts later:
// Redis full (maxmemory: "OOM command not allowed"), away for longer than a command waits,
// restarted empty, flushed, or evicting keys. Each car whose write failed, and each car the view
// lacks (missingFrom), is remembered and written again from this node's copy, which has the
// car's newest position, at most every kRepairGapMs, one repair at a time, until Redis takes it.
// The first failure of an episode is logged with Redis' own words, and so is its end.
// Thread-safe: write() and repair() run on the feed's flush thread, the replies on the Redis
// client's thread.
class LiveViewWriter {
public:
    static constexpr int kRepairGapMs = 1000;

    using Clock = std::chrono::steady_clock;
    // What the node's copy holds of a car now (none: no such car).
    using CarSource = std::function<std::optional<CarSnapshot>(int id)>;

    // `wake` asks the flush thread to look at repairDue() again (a write just failed).
    LiveViewWriter(QByteArray key, std::function<void()> wake);

    // Writes these cars' positions (one HSET); on failure they wait for a repair.
    void write(redis::RedisClient &redis, const std::vector<CarSnapshot> &cars);
    // The view (its field names, from HKEYS) lacks these of cars 1..carCount: they wait for a repair.
    void noteMissing(const std::vector<QByteArray> &presentIds, int carCount);
    // When the next repair may go out; none when nothing waits or one is under way.
    std::optional<Clock::time_point> repairDue() const;
    // Writes the waiting cars as the copy has them now (if due).
    void repair(redis::RedisClient &redis, const CarSource &copy);
    // From now on replies change nothing and wake no one (the owner is being destroyed).
    void close();

    quint64 carsMissed() const { return m_carsMissed.load(std::memory_order_relaxed); }
    quint64 carsRepaired() const { return m_carsRepaired.load(std::memory_order_relaxed); }

private:
    void send(redis::RedisClient &redis, const std::vector<CarSnapshot> &cars, bool isRepair);
    void written(const redis::RedisReply &reply, const std::vector<int> &ids, bool isRepair);

    const QByteArray m_key;
    const std::function<void()> m_wake;
    mutable std::mutex m_mutex;
    std::unordered_set<int> m_waiting; // cars to write again (bounded by the fleet's size)
    bool m_repairing = false;          // a repair's HSET has not been answered yet
    Clock::time_point m_lastRepair{};
    QByteArray m_failure; // Redis' words for the episode's first failure; empty: the view is whole
    bool m_closed = false;
    std::atomic<quint64> m_carsMissed{0};
    std::atomic<quint64> m_carsRepaired{0};
};

} // namespace taxicore
