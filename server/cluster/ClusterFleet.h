#pragma once

#include "cluster/ClusterIds.h"
#include "cluster/FleetDelta.h"
#include "cluster/LiveViewWriter.h"
#include "fleet/SharedMemoryFleet.h"

#include <QList>
#include <QObject>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace taxicore {

namespace redis {
class RedisClient;
class RedisSubscriber;
} // namespace redis

// A node of a cluster: its copy of the fleet lives in this machine's region (SharedMemoryFleet,
// so nearby, ETAs and the live feed stay local scans), the truth in PostgreSQL (the ledger claims
// each booked car in its commit: ledger/PostgresLedger), and what every node changed travels on a
// Redis channel to the others' copies:
//   - positions, batched: the changes a thread makes in one iteration of its event loop go out in
//     one PUBLISH + HSET when that iteration ends, or kMaxHoldMs after the first of them if it
//     lasts longer (a thread without a running event loop wakes the flusher at once), and no
//     sooner than kMinFlushGapMs after the batch before: a lone report leaves within the loop's
//     turn, a burst of a thousand handled in one iteration is one message, and under load the
//     batches stay large; also kept in the Redis hash taxicore:cars (the shared live view a node
//     reloads on every (re)subscribe: messages sent while it was away are lost);
//   - bookings as they committed (announce()), whose states only move forward in a copy;
//   - the car a booking claims, as it is booked and before it commits (held in the other copies
//     until the booking's announcement, its Unclaim, kClaimHoldMs, or a resync frees it).
// Bookings and claims travel with the positions: everything queued when a batch goes out is one
// message (a Batch, FleetDelta.h), in the order it happened. Under load a node announces hundreds
// of bookings a second, and a PUBLISH each cost Redis and every node's subscriber more than the
// bookings' own work; a claim now waits at most until the turn that booked ends (kMaxHoldMs at
// worst), well within the commit it precedes.
// Booking ids come from a PostgreSQL sequence (ClusterIds): unique across nodes. Every process of
// the node publishes what it changed; only the primary subscribes and applies the others'.
//
// Change signals (the live feed's wake-up, http/LiveFeed, which finds them by name: the http layer
// does not link this one): fleetChanged names the cars and bookings of a message on the channel,
// emitted by the primary once it applied the message (the other nodes' changes, and this node's
// own, whose copy had them already) and, in a process that does not apply the channel (a worker),
// as soon as the message arrives: the node's primary applies it about then, so a receiver waits
// for the car's version (carVersions, CarSnapshot::updatedMs) to appear in its copy. A worker
// subscribes for that only once something connects to fleetChanged. fleetReloaded: anything may
// have changed (a reload of the live view, a resync, a resubscribe). Both are emitted on
// ClusterFleet's own threads; connect them queued.
class ClusterFleet final : public QObject, public FleetStore {
    Q_OBJECT
public:
    // Positions waiting to go out are flushed at once past this many cars (a loop iteration that
    // changed more than this sends several messages).
    static constexpr int kFlushCars = 4096;
    // ... and past this many bookings and claims (kMaxDeltasPerMessage bounds a message).
    static constexpr int kFlushDeltas = 1024;
    // ... and after this long, whether or not the turn that changed them is over.
    static constexpr int kMaxHoldMs = 5;
    // Batches go out at most this often (under load a turn of the loop is short).
    static constexpr int kMinFlushGapMs = 2;
    static constexpr int kResyncMs = 30'000;
    static constexpr int kMinResyncGapMs = 1000; // asked-for resyncs run at most this often
    // A car another node claimed is held here until that booking's announcement or Unclaim, or
    // this long: a commit ends within the ledger's statement timeout (5 s) and connect timeout
    // (2 s), so a claim older than this belongs to a node that died before it could say. The
    // database still decides every booking: a car let go too early costs a retry, not a double.
    static constexpr int kClaimHoldMs = 10'000;
    static constexpr uint32_t kEtaStepS = 10; // an ETA travels when it changed by this much
    static constexpr const char *kChannel = "taxicore:fleet";
    static constexpr const char *kCarsKey = "taxicore:cars";

    struct Options {
        QString fleetUrl;  // redis://host:port[/db]
        QString ledgerUrl; // postgresql://...: where ids come from
        bool primary = false;
        quint64 origin = 0; // the node: the same in the primary and its workers
        int claimHoldMs = kClaimHoldMs;
        int resyncMs = kResyncMs; // shorter in tests
    };
    // Null with `error` naming the problem (a bad URL, Redis or PostgreSQL not answering).
    static std::unique_ptr<ClusterFleet> open(SharedRegion &region, const Options &options, QString *error);
    ~ClusterFleet() override;

    void initialiseCars(int count, const std::function<LatLng(int id)> &place) override;
    // Positions from other nodes keep the place their sender located them at when its city file
    // and snapping rules are this node's, else are located as they arrive (applyRemotePosition).
    void locateOnRoads(std::shared_ptr<const city::City> roads) override { m_local.locateOnRoads(std::move(roads)); }
    int carCount() const override { return m_local.carCount(); }
    std::optional<CarSnapshot> car(int id) const override { return m_local.car(id); }
    std::optional<CarSnapshot> updatePosition(int id, LatLng position, float heading, float speedKmh,
                                              bool fromDevice) override;
    // The other nodes heard the arrival already (announced with the move): they keep showing it
    // until the next arrival's record lands; states only move forward there.
    bool undoArrival(uint64_t id, int carId) override { return m_local.undoArrival(id, carId); }
    // The simulator's ETA of a committed booking, re-announced when it moved by kEtaStepS, so
    // riders asking any node see the car coming; an uncommitted booking's is never sent.
    void setEta(uint64_t id, uint32_t etaS) override;
    // A trip's chosen destination (no drop-off given), announced like a move once committed.
    void setDestination(uint64_t id, LatLng destination) override;
    bool isDeviceDriven(int id) const override { return m_local.isDeviceDriven(id); }
    std::vector<NearbyCar> nearby(LatLng centre, double radiusM, int limit, bool availableOnly = false) const override
    {
        return m_local.nearby(centre, radiusM, limit, availableOnly);
    }
    // Tells the other nodes which car this booking claims (with the next batch, before its commit),
    // so that their riders do not race for it: a lost race costs a commit's wait on the car's row
    // lock and a retry on the next car.
    Booking book(const QString &riderId, LatLng pickup, std::optional<LatLng> dropoff, double radiusM,
                 const EtaRanker &etas, const QByteArray &riderTokenHash = {}) override;
    std::optional<BookingSnapshot> booking(uint64_t id) const override { return m_local.booking(id); }
    // What the ledger has open is true whatever this copy holds: when the copy still gives the car
    // to a booking that ended elsewhere (its announcement not yet here), the ledger's booking takes it.
    bool restoreBooking(const BookingSnapshot &booking, const TripProgress &progress = {}) override
    {
        return m_local.restoreBooking(booking, progress) || m_local.applyRemoteBooking(booking);
    }
    std::vector<BookingSnapshot> recentBookings(int max) const override { return m_local.recentBookings(max); }
    Transition beginPickup(uint64_t id) override { return m_local.beginPickup(id); }
    Transition beginComplete(uint64_t id,
                             const std::function<double(double distanceM, double seconds)> &fareFor) override
    {
        return m_local.beginComplete(id, fareFor);
    }
    Transition beginCancel(uint64_t id) override { return m_local.beginCancel(id); }
    Transition beginExpire(uint64_t id) override { return m_local.beginExpire(id); }
    Transition settle(const Transition &move, bool committed) override;
    Reassignment beginReassign(uint64_t id, int carId, double radiusM, const EtaRanker &etas) override
    {
        return m_local.beginReassign(id, carId, radiusM, etas);
    }
    // Announced once committed, like settle().
    Reassignment settleReassign(const Reassignment &move, bool committed) override;
    std::vector<PendingMove> movesPendingFor(int pid) const override { return m_local.movesPendingFor(pid); }
    std::vector<uint64_t> openBookingsMadeBy(int pid) const override { return m_local.openBookingsMadeBy(pid); }
    int settleCarClaimsOf(int pid) override { return m_local.settleCarClaimsOf(pid); }
    bool holdsOpenBookingWithToken(const QByteArray &riderTokenHash) const override
    {
        return m_local.holdsOpenBookingWithToken(riderTokenHash);
    }
    bool settleAbandoned(int pid, const PendingMove &move, const std::optional<BookingSnapshot> &recorded) override;
    void announce(uint64_t bookingId) override;
    // Holds the car and asks for a resync soon: if the winner's booking ended before this node heard
    // of it, only the database can say the car is free again.
    void carTakenElsewhere(int carId) override;
    // The sequence handed out an id another booking has: the rest of its block is dropped (ClusterIds::skipBlock).
    void bookingIdTaken() override { m_ids.skipBlock(); }
    // Frees the car here and tells the other nodes the claim is over (Unclaim).
    void withdraw(uint64_t bookingId) override;

    // Brings the copy's bookings in line with the database: run by the primary after every
    // (re)subscribe (messages sent while Redis was away are lost) and every kResyncMs, on the
    // feed's flush thread. Set by the runtime, which reads the ledger; setResync({}) returns once no
    // resync runs any more (before the ledger closes).
    using Resync = std::function<void(ClusterFleet &fleet)>;
    void setResync(Resync resync);
    // A booking as the database has it (resync): applied like another node's announcement.
    bool applyCommitted(const BookingSnapshot &booking);
    // The open bookings of this copy, and freeing cars held for bookings the database does not know.
    std::vector<BookingSnapshot> openBookings() const;
    int releaseHeldCars() { return m_local.releaseHeldCars(); }

    // Feed deltas this node applied / messages it dropped as unreadable, and positions it published.
    struct Stats {
        quint64 applied = 0;
        quint64 unreadable = 0;
        quint64 published = 0;
        quint64 resyncs = 0;
        quint64 flushes = 0; // batches sent (one PUBLISH each, and one HSET when they hold positions)
        // Other nodes' positions stored with the place their sender located them at (same city
        // file), not snapped again here.
        quint64 placesAsSent = 0;
        // Cars whose write into the live view (taxicore:cars) failed (Redis full, away), and cars
        // written again from this copy because a write failed or the view lacked them.
        quint64 liveViewMissed = 0;
        quint64 liveViewRepaired = 0;
    };
    Stats stats() const;

Q_SIGNALS:
    void fleetChanged(const QList<int> &cars, const QList<qint64> &carVersions, const QList<quint64> &bookings);
    void fleetReloaded();

protected:
    void connectNotify(const QMetaMethod &signal) override;

private:
    struct FlushPost;
    ClusterFleet(SharedRegion &region, const Options &options);
    void queueCar(const CarSnapshot &car, bool fromDevice);
    // `car` as it travels (the feed, the live view): on a trip, with its metres on board so far.
    CarSnapshot withTripMetres(CarSnapshot car) const;
    // A booking's or a claim's delta, sent with the next batch.
    void queueDelta(QByteArray delta);
    // Under m_pendingMutex, before queueing: true (and the batch's clock started) when nothing waits yet.
    bool startsBatch();
    // After queueing: the flusher told when the batch is full, or hooked to this turn's end.
    void queued(bool first, bool full);
    // The positions queued go out when this thread's event loop turn ends (true: posted, or
    // already), or at once without a running loop (false).
    bool scheduleFlush();
    void askFlush();
    // Has the flusher look again at what is due (a repair of the live view), from any thread.
    void wakeFlusher();
    void flushLoop();
    // What a message on the channel changed, to fleetChanged's receivers.
    void signalChanges(const FleetDelta &delta);
    void startHints();
    void publish(const QByteArray &message);
    void publishClaim(FleetDelta::Kind kind, uint64_t bookingId, int carId);
    // Remembers (or forgets, once it is no longer waiting for its car) a committed booking whose
    // ETA may be re-announced, with the ETA the other nodes have.
    void trackEta(const BookingSnapshot &booking);
    void apply(const QByteArray &payload);
    void apply(const FleetDelta &delta);
    // Claims of the other nodes, by car: the booking and when it was heard (m_pendingMutex).
    void noteClaim(int carId, uint64_t bookingId);
    // The claim of `bookingId` on `carId` is over (announced, or withdrawn).
    void forgetClaim(int carId, uint64_t bookingId);
    // Lets go of the cars whose claims are older than claimHoldMs; when the next one expires.
    std::optional<std::chrono::steady_clock::time_point> releaseExpiredClaims();
    void reloadLiveView();
    // Asks Redis which cars the live view holds; those it lacks are written from this copy.
    void checkLiveView();

    SharedMemoryFleet m_local;
    ClusterIds m_ids;
    quint64 m_origin;
    std::unique_ptr<redis::RedisClient> m_redis;
    LiveViewWriter m_view;                          // the positions written into taxicore:cars, and their repair
    std::unique_ptr<redis::RedisSubscriber> m_feed; // primary only
    bool m_primary;
    QString m_fleetUrl;
    std::mutex m_hintsMutex;
    std::unique_ptr<redis::RedisSubscriber> m_hints; // a worker whose fleetChanged is connected
    std::atomic<bool> m_signalled{false};            // something is connected to fleetChanged

    std::mutex m_etaMutex;
    std::unordered_map<uint64_t, uint32_t> m_sharedEta; // committed, assigned bookings → ETA sent

    std::mutex m_pendingMutex;
    std::condition_variable m_flushWake;
    std::unordered_map<int, CarSnapshot> m_pending; // newest position per car since the last flush
    std::unordered_set<int> m_pendingDevices;       // of those, the ones a device reported
    std::vector<QByteArray> m_pendingDeltas;        // bookings and claims since, in order
    struct RemoteClaim {
        uint64_t bookingId = 0;
        std::chrono::steady_clock::time_point heardAt;
    };
    std::unordered_map<int, RemoteClaim> m_remoteClaims; // by car
    int m_claimHoldMs;
    int m_resyncMs;
    std::chrono::steady_clock::time_point m_pendingSince; // when the first of these was queued
    bool m_flushAsked = false;
    std::shared_ptr<FlushPost> m_post; // the flush posted to an event loop: outlives this fleet
    bool m_stopping = false;
    bool m_resyncWanted = false; // set on every (re)subscribe
    Resync m_resync;             // under m_pendingMutex
    std::mutex m_resyncRunning;  // held while a resync runs: setResync() waits for it
    std::thread m_flusher;

    std::atomic<quint64> m_applied{0};
    std::atomic<quint64> m_unreadable{0};
    std::atomic<quint64> m_published{0};
    std::atomic<quint64> m_resyncs{0};
    std::atomic<quint64> m_flushes{0};
    std::atomic<quint64> m_placesAsSent{0};
};

} // namespace taxicore
