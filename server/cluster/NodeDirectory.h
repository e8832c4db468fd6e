#pragma once

#include "redis/RedisReply.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace taxicore {

namespace redis {
class RedisClient;
}

// What a node says about itself in each heartbeat (sampled by its host).
struct NodeStatus {
    QString mode;               // single | pool | processes
    int workers = 0;            // worker processes (processes mode), else 0
    int threads = 0;            // handler threads (pool mode), else 0
    quint64 requestsServed = 0; // since start, every process of the node
    bool leader = false;        // runs the cluster's simulator (a server outside a cluster leads itself)
    bool ledgerOk = true;
};

// The nodes of a cluster and how they are (issue 17): each node's primary writes a heartbeat about
// once a second into the Redis hash kHashKey (field: node name, value: compact JSON) and reads the
// hash back; a node last heard of within kUpWithinMs is "up", up to kDropAfterMs "stale", older
// ones are left out and deleted from the hash. Outside a cluster it knows this node only.
// Names are unique: a publisher that finds its name held by another live node (another `instance`
// heard of within kUpWithinMs) does not overwrite that node's entry, and says why in
// "directory_error" until the name is free again.
// Redis I/O runs on the directory's own thread; snapshot() only copies what the last round read.
class NodeDirectory {
public:
    static constexpr int kHeartbeatMs = 1000;
    static constexpr qint64 kUpWithinMs = 3000;
    static constexpr qint64 kDropAfterMs = 30'000;
    // A heartbeat's Redis round trips each wait at most this long (Redis away: the round is skipped).
    static constexpr int kRedisWaitMs = 1000;
    // A heartbeat Redis refuses is said on stderr at most this often.
    static constexpr qint64 kWarnGapMs = 60'000;
    static constexpr const char *kHashKey = "taxicore:nodes";

    struct Identity {
        QString name; // --node-name, else <hostname>:<port>
        QString url;  // the address the node listens on
    };
    // Publisher: the node's primary (writes its heartbeat). Reader: a worker process of the node
    // (reads the directory only; its primary's heartbeat is in it).
    enum class Role { Publisher, Reader };

    // `fleetUrl` redis://… makes it a cluster's directory; anything else: this node alone.
    // `sample` runs on the directory's thread once per heartbeat.
    NodeDirectory(Identity identity, const QString &fleetUrl, std::function<NodeStatus()> sample,
                  Role role = Role::Publisher);
    // Stops the heartbeat; a publisher deletes its own entry (a node that stops is gone, not stale).
    ~NodeDirectory();
    NodeDirectory(const NodeDirectory &) = delete;
    NodeDirectory &operator=(const NodeDirectory &) = delete;

    bool inCluster() const { return m_redis != nullptr; }
    // {"cluster": bool, "nodes": [entries with "health" and "age_ms"], "directory_error"?: why the
    // last read of Redis failed}. This node is always listed (it is answering, so it is up).
    // Thread-safe, never blocks on Redis.
    QJsonObject snapshot() const;

    // "up", "stale", or empty (gone) for an entry last updated `ageMs` ago.
    static QString healthFor(qint64 ageMs);
    // The default --node-name: <hostname>:<port>.
    static QString defaultName(quint16 port);

private:
    void run();
    void beat();
    QJsonObject selfRecord(qint64 updatedMs);
    // The answer to this node's heartbeat, filled in on the Redis client's thread.
    struct HeartbeatReply {
        std::mutex mutex;
        std::optional<redis::RedisReply> reply;
    };
    // Sends this node's entry (HSET), not waiting for the answer.
    std::shared_ptr<HeartbeatReply> sendHeartbeat(const QJsonObject &self);
    // Why Redis refused it (e.g. full at its maxmemory); empty when it took it or has not answered.
    static QString heartbeatRefusal(const std::shared_ptr<HeartbeatReply> &written);
    // Empty when this node may write its entry; else why not (the name is another live node's).
    QString nameTakenBy(qint64 nowMs);
    bool readDirectory(QString &error);

    Identity m_identity;
    std::function<NodeStatus()> m_sample;
    Role m_role;
    std::unique_ptr<redis::RedisClient> m_redis;
    qint64 m_startedMs = 0;            // wall clock
    QString m_instance;                // random, per process: tells two nodes given one name apart
    qint64 m_lastRefusalWarnedMs = -1; // steady clock (directory thread)
    bool m_nameTaken = false;          // the last heartbeat found the name held by another node (directory thread)
    // Counters at the previous heartbeat, for req/s (directory thread only).
    quint64 m_lastRequests = 0;
    qint64 m_lastSampleSteadyMs = -1;

    mutable std::mutex m_mutex; // guards the fields below
    QJsonObject m_self;         // this node's newest record
    qint64 m_selfSteadyMs = 0;  // when it was made (steady clock)
    QJsonArray m_others;        // the other nodes' records as last read
    qint64 m_readRedisMs = 0;   // Redis TIME of that read
    qint64 m_readSteadyMs = 0;  // and the steady clock then
    QString m_directoryError;   // why the last read failed; empty when it worked
    bool m_stopping = false;
    std::condition_variable m_wake;
    std::thread m_thread;
};

} // namespace taxicore
