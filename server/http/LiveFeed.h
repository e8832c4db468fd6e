#pragma once

#include "fleet/FleetTypes.h"

#include <QElapsedTimer>
#include <QHash>
#include <QHostAddress>
#include <QList>
#include <QObject>
#include <QTimer>
#include <memory>
#include <vector>

class QAbstractHttpServer;
class QHttpServerRequest;
class QWebSocket;

namespace taxicore {

class FleetStore;
class MetricsRecorder;
class RouteTable;
class TripEstimator;

// The rider page's live feed at /api/v1/stream (WebSocket). QAbstractHttpServer upgrades the
// connection (docs/QT64.md §7: the HTTP layer must let the upgrade through without writing);
// this takes the sockets, checks their Origin, and every `intervalMs` pushes each subscribed
// client the cars near its point and, when it follows a booking, that booking's state.
// A client following a booking also gets its car as soon as it changes, in a small `follow`
// message (with the booking's view when the booking changed too). How the feed learns of a change:
//   - over a fleet that signals its changes (a cluster node's cluster/ClusterFleet: its
//     fleetChanged and fleetReloaded signals, found by name, since this layer does not link that
//     one), event-driven: a signal marks the followers of the cars and bookings it names, and one
//     follow pass over just those runs in the next turn of this thread's event loop (all signals
//     that arrived meanwhile coalesce into it). A follower whose car is not yet at the signalled
//     version in this process's copy (a worker hears of a change as its node's primary applies it)
//     is looked at again after 1, 2, 4, ... ms. Nothing moving costs no wake-up; every update tick
//     (intervalMs) also checks every follower once, as a safety net for anything not signalled;
//   - otherwise (the embedded fleet, written by several processes without a signal), every
//     kFollowIntervalMs the feed reads the followed cars' slots (one seqlock read each).
// Either way a car moved through any node of a cluster reaches its rider moments after it lands
// in this node's copy, not half a second later.
//
// Client → server: {"subscribe":{"lat":..,"lng":..,"radius_m":1000,"limit":20,"booking_id":7,
//                                 "rider_token":"<booking 7's rider_token, or the admin token>"}}
//   booking_id is a positive whole number or a string of its digits (anything else: error
//   invalid_booking_id, the subscribe not taken). Following a booking needs its rider token (a browser cannot set
//   Authorization on a WebSocket, so it is a field): none → error rider_token_required, another → not_your_booking, and
//   the subscribe is not taken. A booking not in this copy yet is checked once it arrives; refused then, the client
//   keeps its point without the booking.
// Server → client: {"type":"hello","interval_ms":500,"follow_interval_ms":10 (0 if event-driven),...},
//                  {"type":"update","cars":[...],"booking":{...}} every interval_ms,
//                  {"type":"follow","t":..,"booking_id":7,"car":{...},"booking":{...}?} on a change,
//                  {"type":"error","error":code,"message":text}.
// An update tick serves its clients spread evenly over most of its interval, a few at a time and
// at most ~1 ms of work before the event loop runs again (runTickSlice): this thread's HTTP
// requests and follow messages wait for a slice, not a tick, and the tick is no burst of CPU.
// Bounded: at most maxClients() sockets; a client whose unsent bytes exceed maxPendingBytes()
// is dropped; one that has not subscribed within idleTimeoutMs() is closed (1008), and so is one
// sending more messages than its FeedMessageBudget (10 a second, bursts of 20); a message over
// 4 KiB, whole or in fragments, is closed with 1009, a binary one with 1003. When the feed goes
// (the server stops) every client is sent 1001 (going away). Upgraded
// sockets still count toward the connection guard's --max-connections (ConnectionGuard::
// releaseUpgraded). Reads FleetStore only; lives on the server's (I/O) thread.
class LiveFeed : public QObject {
    Q_OBJECT
public:
    static constexpr const char *kPath = "/api/v1/stream";
    // --feed-idle-timeout-ms: how long an upgraded client may stay without subscribing.
    static constexpr int kDefaultIdleTimeoutMs = 30'000;
    // Over a fleet without change signals: how often the cars of followed bookings are checked for
    // a change to push. Each check is one slot read per follower, so an idle follower costs ~100
    // reads a second (docs/benchmarks.md §9 measures 2,000 of them); a change reaches the rider
    // within this of landing in the fleet.
    static constexpr int kFollowIntervalMs = 10;
    // Event-driven: a follower whose signalled change is not in this copy yet is looked at again
    // after 1, 2, 4, ... ms, this many times for a car (~1 s) and for a booking (~63 ms).
    static constexpr int kCarRetries = 10;
    static constexpr int kBookingRetries = 6;

    LiveFeed(QAbstractHttpServer &server, const FleetStore &fleet, QObject *parent = nullptr);
    ~LiveFeed() override;
    // Closes every client with 1001 (going away) and forgets it, without waiting: the server is
    // stopping. The destructor does it too; a worker does it before it waits for its last commits,
    // which its supervisor may not let it finish.
    void closeAllClients();

    // Road ETAs for the cars (the service's estimator); without one, straight-line estimates.
    // The estimator must outlive this feed and be safe to call from this thread.
    void setEstimator(const TripEstimator *estimator) { m_estimator = estimator; }
    void setMaxClients(int max) { m_maxClients = max; }
    int maxClients() const { return m_maxClients; }
    // At most this many of maxClients() from one client address (the peer, or the client a
    // --trusted-proxy names), so that one client cannot take every place; loopback is not counted
    // (this machine's own tools: the console, benchmarks).
    static constexpr int kDefaultMaxClientsPerAddress = 32;
    void setMaxClientsPerAddress(int max) { m_maxClientsPerAddress = max; }
    int maxClientsPerAddress() const { return m_maxClientsPerAddress; }
    void setMaxPendingBytes(qint64 bytes) { m_maxPendingBytes = bytes; }
    qint64 maxPendingBytes() const { return m_maxPendingBytes; }
    void setIntervalMs(int ms) { m_timer.setInterval(ms); }
    void setFollowIntervalMs(int ms) { m_followTimer.setInterval(ms); }
    void setIdleTimeoutMs(int ms) { m_idleTimeoutMs = ms; }
    int idleTimeoutMs() const { return m_idleTimeoutMs; }
    int clientCount() const { return int(m_clients.size()); }
    // Keeps clientCount() in the process's worker slot (/metrics taxicore_feed_clients: the
    // connection guard stops counting a socket once it upgrades). `metrics` outlives the feed.
    void publishClientCount(MetricsRecorder &metrics);
    // True when the fleet signals its changes (no follow tick: see the class comment).
    bool isEventDriven() const { return m_eventDriven; }
    // Follow passes run so far: a follow tick, an event-driven pass, or an update tick's check of
    // every follower. Idle followers over an event-driven fleet cost only the last kind.
    quint64 followPasses() const { return m_followPasses; }

    // True for a WebSocket upgrade request to kPath: the HTTP layer must then return true from
    // handleRequest without writing anything, so QAbstractHttpServer hands the socket over.
    static bool isUpgradeRequest(const QHttpServerRequest &request);
    // True for any WebSocket upgrade request (Upgrade: websocket, Connection: upgrade). One to
    // another path must make handleRequest return false: Qt then answers 404 through
    // missingHandler and closes, instead of upgrading after a response was written.
    static bool isWebSocketUpgrade(const QHttpServerRequest &request);
    // GET /api/v1/stream without an upgrade → 426 naming the protocol (documents the route).
    static void registerRoutes(RouteTable &router);

private Q_SLOTS:
    // The fleet's change signals (event-driven mode), connected queued by name.
    void onFleetChanged(const QList<int> &cars, const QList<qint64> &carVersions, const QList<quint64> &bookings);
    void onFleetReloaded();

private:
    struct Client;
    // What a follower is to be checked for: its car at this version (0: any), its booking.
    struct Hint {
        qint64 carVersion = 0;
        bool booking = false;
        int tries = 0;    // checks that did not find it yet
        qint64 dueMs = 0; // a retry: when
    };

    void acceptPending();
    // Takes one of the client's frame budget; past it the client is closed (1008).
    void chargeFrame(QWebSocket *socket);
    void onMessage(QWebSocket *socket, const QString &text);
    void drop(QWebSocket *socket, int closeCode, const QString &reason);
    // Forgets the client (and its place in its address's count; a follower also its place in the
    // follower index); false when it was none.
    bool removeClient(QWebSocket *socket);
    // After m_clients changed: the worker slot's count follows (publishClientCount).
    void clientsChanged();
    // An update tick: every client's update, served in paced slices (runTickSlice) between which
    // the thread's event loop runs.
    void tick();
    void runTickSlice();
    bool isCurrent(const Client &client) const;
    // The follow tick: pushes each followed booking's car (and the booking) when it changed.
    void followTick();
    // Checks one follower and pushes its `follow` message when it changed; false when nothing did.
    bool pushFollow(Client &client);
    // Event-driven: the marked followers, in one pass (also the due retries).
    void followMarked();
    void mark(QWebSocket *socket, qint64 carVersion, bool booking);
    void schedulePass();
    void indexFollowers();
    // True when the client proved it may see `booking` (its rider_token, or the admin token);
    // otherwise tells it so and stops following (it keeps its point).
    bool mayShow(Client &client, const BookingSnapshot &booking);
    // Records what the client has seen of its booking and car, so only changes are pushed.
    void startFollowing(Client &client);
    enum class FollowChange { None, Car, Booking };
    FollowChange followChanged(Client &client);
    // One tick's shared work: answers per ~10 m cell, and whether road ETAs are still affordable.
    struct TickCache {
        QHash<QString, QByteArray> cars;
        QElapsedTimer sinceStart;
        qint64 workedNs = 0; // the tick's own work in the slices before this one
        QElapsedTimer slice; // this slice's
        bool byRoad = true;
        bool followersChecked = false;
        qint64 workedMs() const { return (workedNs + slice.nsecsElapsed()) / 1'000'000; }
    };
    void sendUpdate(Client &client, TickCache &cache);
    QByteArray carsJson(const Client &client, TickCache &cache) const;
    // The client's booking as its rider sees it; empty when the client may not see it (mayShow).
    // With `cache` (an update tick), road ETAs only while the tick's road budget lasts.
    QByteArray bookingJsonBytes(Client &client, TickCache *cache = nullptr);
    bool send(Client &client, const QByteArray &utf8Json);
    // Drops the client when more than m_maxPendingBytes wait to be written to it: the feed's
    // messages, and the pongs Qt answers every ping with by itself. True when it was dropped.
    bool dropIfNotReading(Client &client);
    void dropClientsNotReading();

    QAbstractHttpServer &m_server;
    const FleetStore &m_fleet;
    const TripEstimator *m_estimator = nullptr;
    std::unique_ptr<TripEstimator> m_fallbackEstimator;
    QHash<QWebSocket *, std::shared_ptr<Client>> m_clients;
    QTimer m_timer;
    QTimer m_followTimer;
    // The update tick being served: its clients in order, the next one, and its shared work.
    std::vector<std::shared_ptr<Client>> m_tickQueue;
    std::size_t m_tickNext = 0;
    TickCache m_tick;
    QTimer m_sliceTimer;
    std::vector<std::shared_ptr<Client>> m_followers; // reused by every follow tick
    quint64 m_followPasses = 0;
    // Event-driven mode.
    bool m_eventDriven = false;
    bool m_passPosted = false;
    bool m_indexStale = true;
    QHash<int, QList<QWebSocket *>> m_byCar;         // followers by the car they follow
    QHash<quint64, QList<QWebSocket *>> m_byBooking; // and by their booking
    QHash<QWebSocket *, Hint> m_marked;              // to check in the next pass
    QHash<QWebSocket *, Hint> m_retries;             // to check again later
    QTimer m_retryTimer;
    QTimer m_backlogTimer; // dropClientsNotReading, while there are clients
    int m_maxClients = 1000;
    int m_maxClientsPerAddress = kDefaultMaxClientsPerAddress;
    QHash<QHostAddress, int> m_clientsPerAddress; // counted addresses only (not loopback)
    MetricsRecorder *m_metrics = nullptr;
    int m_publishedClients = 0; // what this feed added to its worker slot's feedClients
    qint64 m_maxPendingBytes = 256 * 1024;
    int m_idleTimeoutMs = kDefaultIdleTimeoutMs;
};

} // namespace taxicore
