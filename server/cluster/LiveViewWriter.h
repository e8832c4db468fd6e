#pragma once

#include "fleet/FleetTypes.h"

#include <QByteArray>
#include <QString>
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
// (ClusterFleet::kCarsKey), and their repair. The view is what a node loads when it starts or
// (re)subscribes, so a write Redis did not take leaves a car where it was for every node that
// loads it later: Redis full (maxmemory: "OOM command not allowed"), away for longer than a
// command waits, restarted empty, flushed, or evicting keys. Each car whose write failed, and
// each car the view lacks (noteMissing), is remembered and written again from this node's copy,
// at most kRepairBatchCars at a time, one repair under way at a time; after a failed repair the
// next waits twice as long (kRepairGapMs up to kMaxRepairGapMs), so a long outage costs Redis and
// the flush thread little. The copy holds the newest position this node heard of, which another
// node may just have overtaken: the view then has an older one until the car moves again (a node
// that already holds the newer one keeps it: positions are versioned).
// An episode (from the first failure to a repair that leaves nothing waiting) is logged once with
// Redis' own words, and its end too; at most one episode of failures per kLogGapMs is logged,
// so a Redis hovering at its limit does not flood the log (and one of missing cars: a new
// cluster's first start is one, and must not hide a failure soon after).
// Thread-safe: write() and repair() run on the feed's flush thread, the replies on the Redis
// client's thread; `wake` is called with no lock held.
class LiveViewWriter {
public:
    static constexpr int kRepairGapMs = 1000;
    static constexpr int kMaxRepairGapMs = 30'000;
    static constexpr int kRepairBatchCars = 4096;
    static constexpr int kLogGapMs = 60'000;

    using Clock = std::chrono::steady_clock;
    // What the node's copy holds of a car now (none: no such car).
    using CarSource = std::function<std::optional<CarSnapshot>(int id)>;

    // `wake` asks the flush thread to look at repairDue() again (cars now wait for a repair).
    LiveViewWriter(QByteArray key, std::function<void()> wake);

    // Writes these cars' positions (one HSET); on failure they wait for a repair.
    void write(redis::RedisClient &redis, const std::vector<CarSnapshot> &cars);
    // The view holds these fields (car ids, from HKEYS or HGETALL): the others of cars
    // 1..carCount wait for a repair.
    void noteMissing(const std::vector<QByteArray> &presentIds, int carCount);
    // When the next repair may go out; none when nothing waits or one is under way.
    std::optional<Clock::time_point> repairDue() const;
    // Writes up to kRepairBatchCars of the waiting cars as the copy has them now (if due).
    void repair(redis::RedisClient &redis, const CarSource &copy);
    // From now on replies change nothing and wake no one (the owner is being destroyed).
    void close();

    // Cars whose write failed (repairs that failed again are not counted twice), and cars written
    // by a repair.
    quint64 carsMissed() const { return m_carsMissed.load(std::memory_order_relaxed); }
    quint64 carsRepaired() const { return m_carsRepaired.load(std::memory_order_relaxed); }

private:
    void send(redis::RedisClient &redis, const std::vector<CarSnapshot> &cars, bool isRepair);
    void written(const redis::RedisReply &reply, const std::vector<int> &ids, bool isRepair);
    // Under m_mutex: starts an episode if none runs; true when it is to be logged (the last one
    // of its kind, a failure or cars missing, was logged kLogGapMs ago or never).
    bool beginEpisode(Clock::time_point now, std::optional<Clock::time_point> &lastOfItsKind);

    const QByteArray m_key;
    const std::function<void()> m_wake;
    mutable std::mutex m_mutex;
    std::unordered_set<int> m_waiting; // cars to write again (bounded by the fleet's size)
    bool m_repairing = false;          // a repair's HSET has not been answered yet
    Clock::time_point m_nextRepair{};  // the earliest the next repair may go out
    int m_gapMs = kRepairGapMs;        // doubles with every failed repair
    bool m_broken = false;             // an episode runs
    bool m_told = false;               // ... and was logged
    std::optional<Clock::time_point> m_lastFailureTold;
    std::optional<Clock::time_point> m_lastMissingTold;
    bool m_closed = false;
    std::atomic<quint64> m_carsMissed{0};
    std::atomic<quint64> m_carsRepaired{0};
};

} // namespace taxicore
