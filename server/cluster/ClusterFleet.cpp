#include "cluster/ClusterFleet.h"

#include "cluster/FleetDelta.h"
#include "redis/RedisClient.h"
#include "redis/RedisEndpoint.h"
#include "redis/RedisSubscriber.h"

#include <QAbstractEventDispatcher>
#include <QDebug>
#include <QMetaMethod>
#include <QThread>

#include <algorithm>
#include <optional>

namespace taxicore {

using redis::parseRedisUrl;
using redis::RedisClient;
using redis::RedisEndpoint;
using redis::RedisReply;
using redis::RedisSubscriber;

namespace {

// How long open() waits for Redis to answer before refusing to start.
constexpr int kStartTimeoutMs = 2000;

} // namespace

// What a thread's event loop holds to ask for a flush: the loop may outlive this fleet.
struct ClusterFleet::FlushPost {
    std::mutex mutex;
    ClusterFleet *fleet = nullptr; // null once the fleet is being destroyed
};

namespace {
// The fleets this thread changed in the current turn of its event loop, and those whose flush is
// hooked to the loop's `awake` (the start of its next turn).
thread_local std::vector<const void *> t_changed;
thread_local std::vector<const void *> t_hooked;

bool contains(const std::vector<const void *> &keys, const void *key)
{
    return std::find(keys.begin(), keys.end(), key) != keys.end();
}
} // namespace

std::unique_ptr<ClusterFleet> ClusterFleet::open(SharedRegion &region, const Options &options, QString *error)
{
    QString why;
    if (!parseRedisUrl(options.fleetUrl, &why)) {
        *error = QStringLiteral("--fleet %1: %2").arg(options.fleetUrl, why);
        return nullptr;
    }
    if (!options.ledgerUrl.startsWith(QStringLiteral("postgresql://"))
        && !options.ledgerUrl.startsWith(QStringLiteral("postgres://"))) {
        *error = QStringLiteral("--fleet %1 needs --ledger postgresql://...: the nodes of a cluster claim their cars "
                                "and take their booking ids in one database")
                     .arg(options.fleetUrl);
        return nullptr;
    }
    std::unique_ptr<ClusterFleet> fleet(new ClusterFleet(region, options));
    const RedisReply pong = fleet->m_redis->commandAndWait({QByteArrayLiteral("PING")}, kStartTimeoutMs);
    if (!pong.ok()) {
        *error = QStringLiteral("--fleet: %1").arg(QString::fromUtf8(pong.text));
        return nullptr;
    }
    return fleet;
}

ClusterFleet::ClusterFleet(SharedRegion &region, const Options &options)
    : FleetStore(region)
    , m_local(region)
    , m_ids(options.ledgerUrl)
    , m_origin(options.origin)
    , m_view(QByteArray(kCarsKey), [this] { wakeFlusher(); })
    , m_primary(options.primary)
    , m_fleetUrl(options.fleetUrl)
    , m_claimHoldMs(options.claimHoldMs)
    , m_resyncMs(options.resyncMs)
    , m_post(std::make_shared<FlushPost>())
{
    m_post->fleet = this;
    const RedisEndpoint endpoint = *parseRedisUrl(options.fleetUrl, nullptr);
    m_redis = std::make_unique<RedisClient>(endpoint);
    m_local.setIdSource([this] { return m_ids.next(); });
    m_local.versionPositionsAcrossCopies();
    if (options.primary)
        m_feed = std::make_unique<RedisSubscriber>(
            endpoint, QList<QByteArray>{QByteArray(kChannel)},
            [this](const QByteArray &, const QByteArray &payload) { apply(payload); }, [this] { reloadLiveView(); });
    m_flusher = std::thread([this] { flushLoop(); });
}

ClusterFleet::~ClusterFleet()
{
    {
        std::lock_guard lock(m_post->mutex);
        m_post->fleet = nullptr;
    }
    {
        std::lock_guard lock(m_pendingMutex);
        m_stopping = true;
    }
    m_flushWake.notify_all();
    m_flusher.join();
    m_feed.reset();
    {
        std::lock_guard hints(m_hintsMutex);
        m_hints.reset();
    }
    // The client answers what it still holds as it stops; its callbacks must find the members
    // they touch alive, and the view writer no longer waking the flusher.
    m_view.close();
    m_redis.reset();
}

void ClusterFleet::initialiseCars(int count, const std::function<LatLng(int id)> &place)
{
    m_local.initialiseCars(count, place);
    // The subscriber's first load of the live view usually came before the cars existed here, and
    // found no car to place: load it again now.
    if (m_primary)
        reloadLiveView();
}

std::optional<CarSnapshot> ClusterFleet::updatePosition(int id, LatLng position, float heading, float speedKmh,
                                                        bool fromDevice)
{
    const auto before = m_local.car(id);
    const auto after = m_local.updatePosition(id, position, heading, speedKmh, fromDevice);
    if (!after)
        return after;
    queueCar(*after, fromDevice);
    // The move brought the car to its pickup: the booking is arriving, on every node.
    if (before && before->state == CarState::ToPickup && after->state == CarState::Waiting && after->bookingId)
        announce(after->bookingId);
    return after;
}

FleetStore::Transition ClusterFleet::settle(const Transition &move, bool committed)
{
    Transition settled = m_local.settle(move, committed);
    if (committed && settled.result == TransitionResult::Done)
        announce(settled.booking.id);
    return settled;
}

FleetStore::Reassignment ClusterFleet::settleReassign(const Reassignment &move, bool committed)
{
    Reassignment settled = m_local.settleReassign(move, committed);
    if (committed && settled.result == ReassignResult::Done)
        announce(settled.booking.id);
    return settled;
}

bool ClusterFleet::settleAbandoned(int pid, const PendingMove &move, const std::optional<BookingSnapshot> &recorded)
{
    const bool applied = m_local.settleAbandoned(pid, move, recorded);
    if (applied)
        announce(move.bookingId);
    return applied;
}

FleetStore::Booking ClusterFleet::book(const QString &riderId, LatLng pickup, std::optional<LatLng> dropoff,
                                       double radiusM, const EtaRanker &etas, const QByteArray &riderTokenHash)
{
    Booking booked = m_local.book(riderId, pickup, dropoff, radiusM, etas, riderTokenHash);
    if (booked.result == BookResult::Booked)
        publishClaim(FleetDelta::Kind::Claim, booked.booking.id, booked.booking.carId);
    return booked;
}

void ClusterFleet::withdraw(uint64_t bookingId)
{
    const auto booking = m_local.booking(bookingId);
    m_local.cancel(bookingId);
    if (booking && booking->carId > 0)
        publishClaim(FleetDelta::Kind::Unclaim, bookingId, booking->carId);
}

void ClusterFleet::publishClaim(FleetDelta::Kind kind, uint64_t bookingId, int carId)
{
    FleetDelta delta;
    delta.kind = kind;
    delta.origin = m_origin;
    delta.booking.id = bookingId;
    delta.booking.carId = carId;
    queueDelta(encodeFleetDelta(delta));
}

void ClusterFleet::setEta(uint64_t id, uint32_t etaS)
{
    m_local.setEta(id, etaS);
    {
        std::lock_guard lock(m_etaMutex);
        const auto shared = m_sharedEta.find(id);
        if (shared == m_sharedEta.end() || uint32_t(std::abs(qint64(shared->second) - qint64(etaS))) < kEtaStepS)
            return;
    }
    announce(id);
}

void ClusterFleet::setDestination(uint64_t id, LatLng destination)
{
    m_local.setDestination(id, destination);
    // Only a ride under way has one: its pickup is committed (a copy's state follows the commit).
    announce(id);
}

bool ClusterFleet::applyCommitted(const BookingSnapshot &booking)
{
    if (!m_local.applyRemoteBooking(booking))
        return false;
    trackEta(booking);
    return true;
}

void ClusterFleet::trackEta(const BookingSnapshot &booking)
{
    std::lock_guard lock(m_etaMutex);
    if (booking.state != BookingState::Assigned) {
        m_sharedEta.erase(booking.id);
        return;
    }
    if (m_sharedEta.size() >= std::size_t(kBookingCapacity))
        m_sharedEta.clear(); // bounded: bookings that ended unseen; the live ones come back on their next move
    m_sharedEta[booking.id] = booking.etaS;
}

void ClusterFleet::announce(uint64_t bookingId)
{
    const auto booking = m_local.booking(bookingId);
    if (!booking)
        return;
    trackEta(*booking);
    FleetDelta delta;
    delta.kind = FleetDelta::Kind::Booking;
    delta.origin = m_origin;
    delta.booking = *booking;
    // A ride under way goes with its metres on board so far: each copy meters it on its own
    // odometer from there (SharedMemoryFleet::applyRemoteBooking), and the node that completes it
    // bills them all, wherever the pickup and the moves were made.
    if (booking->state == BookingState::OnTrip)
        if (const auto car = m_local.car(booking->carId))
            delta.booking.distanceM = metresOnBoard(*booking, car->odometerM);
    delta.price = PricingBoard(m_local.pricing()).bookingPrice(bookingId);
    queueDelta(encodeFleetDelta(delta));
}

void ClusterFleet::carTakenElsewhere(int carId)
{
    m_local.holdCar(carId);
    {
        std::lock_guard lock(m_pendingMutex);
        m_resyncWanted = true;
    }
    m_flushWake.notify_one();
}

bool ClusterFleet::startsBatch()
{
    const bool first = m_pending.empty() && m_pendingDeltas.empty();
    if (first)
        m_pendingSince = std::chrono::steady_clock::now();
    return first;
}

void ClusterFleet::queued(bool first, bool full)
{
    if (full)
        askFlush();
    else if (scheduleFlush() && first)
        m_flushWake.notify_one(); // the flusher's deadline: kMaxHoldMs from now
}

void ClusterFleet::queueDelta(QByteArray delta)
{
    bool first = false;
    bool full = false;
    {
        std::lock_guard lock(m_pendingMutex);
        first = startsBatch();
        m_pendingDeltas.push_back(std::move(delta));
        full = m_pendingDeltas.size() >= std::size_t(kFlushDeltas);
    }
    queued(first, full);
}

void ClusterFleet::queueCar(const CarSnapshot &car, bool fromDevice)
{
    const CarSnapshot travelling = withTripMetres(car); // outside the lock: reads the booking's slot
    bool first = false;
    bool full = false;
    {
        std::lock_guard lock(m_pendingMutex);
        first = startsBatch();
        m_pending[car.id] = travelling;
        if (fromDevice)
            m_pendingDevices.insert(car.id);
        full = m_pending.size() >= std::size_t(kFlushCars);
    }
    queued(first, full);
}

CarSnapshot ClusterFleet::withTripMetres(CarSnapshot car) const
{
    // The metres on board at this very position: a copy that applies it takes them, whatever
    // moves of the car it missed before (SharedMemoryFleet::applyRemotePosition).
    car.tripM = 0;
    if (car.state == CarState::OnTrip && car.bookingId != 0)
        if (const auto booking = m_local.booking(car.bookingId))
            if (booking->state == BookingState::OnTrip && booking->carId == car.id)
                car.tripM = metresOnBoard(*booking, car.odometerM);
    return car;
}

bool ClusterFleet::scheduleFlush()
{
    // In a running event loop: once this turn of it is over (its dispatcher's `awake`, when the
    // next turn starts: no post, no wake-up write), so that every change it makes goes out in one
    // batch. A long turn (an update tick of the live feed over hundreds of riders) holds the
    // positions no longer than kMaxHoldMs: the flusher's deadline.
    const void *key = m_post.get();
    if (contains(t_changed, key))
        return true;
    QThread *thread = QThread::currentThread();
    QAbstractEventDispatcher *dispatcher = thread ? QAbstractEventDispatcher::instance(thread) : nullptr;
    if (!dispatcher || thread->loopLevel() == 0) {
        askFlush();
        return false;
    }
    if (!contains(t_hooked, key)) {
        t_hooked.push_back(key);
        // Stays connected for the thread's life (a no-op once this fleet is gone).
        QObject::connect(dispatcher, &QAbstractEventDispatcher::awake, dispatcher, [post = m_post] {
            const auto it = std::find(t_changed.begin(), t_changed.end(), post.get());
            if (it == t_changed.end())
                return;
            t_changed.erase(it);
            std::lock_guard lock(post->mutex);
            if (post->fleet)
                post->fleet->askFlush();
        });
    }
    t_changed.push_back(key);
    return true;
}

void ClusterFleet::askFlush()
{
    {
        std::lock_guard lock(m_pendingMutex);
        if (m_flushAsked)
            return; // the flusher knows already
        m_flushAsked = true;
    }
    m_flushWake.notify_one();
}

void ClusterFleet::wakeFlusher()
{
    // Taken and let go before the notify: the flusher either waits already, or has yet to look at
    // what changed (it looks with the mutex held), so the wake-up is never lost.
    m_pendingMutex.lock();
    m_pendingMutex.unlock();
    m_flushWake.notify_one();
}

void ClusterFleet::setResync(Resync resync)
{
    {
        std::lock_guard running(m_resyncRunning);
        std::lock_guard lock(m_pendingMutex);
        m_resync = std::move(resync);
        m_resyncWanted = true;
    }
    m_flushWake.notify_one();
}

std::vector<BookingSnapshot> ClusterFleet::openBookings() const
{
    return m_local.openBookings();
}

void ClusterFleet::flushLoop()
{
    using std::chrono::milliseconds;
    using Clock = std::chrono::steady_clock;
    std::unordered_map<int, CarSnapshot> batch;
    std::vector<QByteArray> deltas;
    auto lastResync = Clock::now();
    auto lastFlush = Clock::time_point{};
    std::unique_lock lock(m_pendingMutex);
    // A batch goes out when its turn ended (asked) or it waited kMaxHoldMs, but not sooner than
    // kMinFlushGapMs after the one before (unless full): under load, turns are short and many,
    // and a message per turn would cost every node more than the reports themselves.
    const auto readyAt = [&]() -> std::optional<Clock::time_point> {
        if (m_pending.empty() && m_pendingDeltas.empty())
            return std::nullopt;
        if (m_pending.size() >= std::size_t(kFlushCars) || m_pendingDeltas.size() >= std::size_t(kFlushDeltas))
            return Clock::time_point{};
        const auto gapOver = lastFlush + milliseconds(kMinFlushGapMs);
        return std::max(gapOver, m_flushAsked ? Clock::time_point{} : m_pendingSince + milliseconds(kMaxHoldMs));
    };
    while (!m_stopping) {
        if (m_pending.empty() && m_pendingDeltas.empty())
            m_flushAsked = false; // what it asked for went out already
        // Asleep until a batch is ready, a claim expires, a repair or a resync is due: nothing to
        // do costs no wake-up. Only a copy with a resync (the primary's) has resyncs due: a
        // worker's deadline used to pass 30 s after its start and never move, and its flusher
        // then spun on a core for the rest of its life.
        std::optional<Clock::time_point> due;
        const auto sooner = [&due](Clock::time_point at) { due = due ? std::min(*due, at) : at; };
        if (m_resync) {
            sooner(lastResync + milliseconds(m_resyncMs));
            if (m_resyncWanted)
                sooner(lastResync + milliseconds(kMinResyncGapMs));
        }
        if (const auto ready = readyAt())
            sooner(*ready);
        if (const auto expiry = releaseExpiredClaims())
            sooner(*expiry);
        if (const auto repair = m_view.repairDue())
            sooner(*repair);
        if (!due)
            m_flushWake.wait(lock);
        else if (*due > Clock::now())
            m_flushWake.wait_until(lock, *due);
        const auto now = std::chrono::steady_clock::now();
        const auto sinceResync = now - lastResync;
        if (m_resync
            && ((m_resyncWanted && sinceResync >= milliseconds(kMinResyncGapMs))
                || sinceResync >= milliseconds(m_resyncMs))) {
            m_resyncWanted = false;
            lastResync = now;
            lock.unlock();
            bool ran = false;
            {
                std::lock_guard running(m_resyncRunning);
                Resync resync;
                {
                    std::lock_guard again(m_pendingMutex);
                    resync = m_resync; // cleared meanwhile: the ledger is closing
                }
                if (resync) {
                    resync(*this);
                    m_resyncs.fetch_add(1, std::memory_order_relaxed);
                    ran = true;
                }
            }
            if (ran)
                checkLiveView(); // Redis may have been flushed or evicted keys without a reconnect
            if (ran && m_signalled.load(std::memory_order_relaxed))
                Q_EMIT fleetReloaded();
            lock.lock();
        }
        if (const auto repair = m_view.repairDue(); repair && *repair <= Clock::now()) {
            lock.unlock();
            m_view.repair(*m_redis, [this](int id) -> std::optional<CarSnapshot> {
                if (const auto car = m_local.car(id))
                    return withTripMetres(*car);
                return std::nullopt;
            });
            lock.lock();
        }
        const auto ready = readyAt();
        if (!ready || *ready > Clock::now())
            continue;
        m_flushAsked = false;
        lastFlush = Clock::now();
        batch.swap(m_pending);
        deltas.swap(m_pendingDeltas);
        FleetDelta delta;
        delta.placesKey = m_local.placesKey(); // what the batch's places were located with
        delta.deviceCars.assign(m_pendingDevices.begin(), m_pendingDevices.end());
        m_pendingDevices.clear();
        lock.unlock();
        delta.origin = m_origin;
        delta.cars.reserve(batch.size());
        for (const auto &[id, car] : batch)
            delta.cars.push_back(car);
        // The positions first: a booking that follows a car's arrival finds the car there.
        if (!batch.empty())
            deltas.insert(deltas.begin(), encodeFleetDelta(delta));
        // One write to the Redis connection for all (its thread sends them as one pipeline).
        for (std::size_t at = 0; at < deltas.size(); at += kMaxDeltasPerMessage) {
            const auto end =
                deltas.begin() + qsizetype(std::min<std::size_t>(deltas.size(), at + kMaxDeltasPerMessage));
            publish(encodeFleetMessage(m_origin, std::vector<QByteArray>(deltas.begin() + qsizetype(at), end)));
        }
        m_view.write(*m_redis, delta.cars);
        m_published.fetch_add(batch.size(), std::memory_order_relaxed);
        m_flushes.fetch_add(1, std::memory_order_relaxed);
        batch.clear();
        deltas.clear();
        lock.lock();
    }
}

void ClusterFleet::publish(const QByteArray &message)
{
    // Fire and forget: a node that misses a message reloads the live view when it resubscribes,
    // and the database, not the feed, decides every claim.
    m_redis->command({QByteArrayLiteral("PUBLISH"), QByteArray(kChannel), message});
}

void ClusterFleet::apply(const QByteArray &payload)
{
    const auto deltas = decodeFleetMessage(payload);
    if (!deltas) {
        m_unreadable.fetch_add(1, std::memory_order_relaxed);
        return;
    }
    for (const FleetDelta &delta : *deltas)
        apply(delta);
}

void ClusterFleet::apply(const FleetDelta &delta)
{
    if (delta.origin == m_origin) {
        signalChanges(delta); // this node's own change: its copy has it
        return;
    }
    if (delta.kind == FleetDelta::Kind::Cars) {
        // Compared once per delta: another key costs no look at the places below.
        const uint64_t key = delta.placesKey == m_local.placesKey() ? delta.placesKey : 0;
        for (const CarSnapshot &car : delta.cars)
            if (m_local.applyRemotePosition(car, key) == SharedMemoryFleet::RemotePosition::PlaceAsSent)
                m_placesAsSent.fetch_add(1, std::memory_order_relaxed);
        for (const int id : delta.deviceCars)
            m_local.markDeviceDriven(id);
    } else if (delta.kind == FleetDelta::Kind::Claim) {
        m_local.holdCar(delta.booking.carId);
        noteClaim(delta.booking.carId, delta.booking.id);
    } else if (delta.kind == FleetDelta::Kind::Unclaim) {
        m_local.releaseHeldCar(delta.booking.carId);
        forgetClaim(delta.booking.carId, delta.booking.id);
    } else {
        forgetClaim(delta.booking.carId, delta.booking.id); // the booking holds the car now, or freed it
        if (!applyCommitted(delta.bookingStampedHere()))
            qWarning().noquote() << "cluster: no room for booking" << delta.booking.id << "in this node's copy";
        else if (delta.price)
            PricingBoard(m_local.pricing()).recordBookingPrice(delta.booking.id, *delta.price);
    }
    m_applied.fetch_add(1, std::memory_order_relaxed);
    signalChanges(delta);
}

void ClusterFleet::noteClaim(int carId, uint64_t bookingId)
{
    bool first = false;
    {
        std::lock_guard lock(m_pendingMutex);
        first = m_remoteClaims.empty();
        m_remoteClaims[carId] = {bookingId, std::chrono::steady_clock::now()};
    }
    if (first)
        m_flushWake.notify_one(); // the flusher's next wake-up: this claim's expiry
}

void ClusterFleet::forgetClaim(int carId, uint64_t bookingId)
{
    std::lock_guard lock(m_pendingMutex);
    if (const auto it = m_remoteClaims.find(carId); it != m_remoteClaims.end() && it->second.bookingId == bookingId)
        m_remoteClaims.erase(it);
}

// Under m_pendingMutex (the flusher's loop).
std::optional<std::chrono::steady_clock::time_point> ClusterFleet::releaseExpiredClaims()
{
    const auto now = std::chrono::steady_clock::now();
    const auto hold = std::chrono::milliseconds(m_claimHoldMs);
    std::optional<std::chrono::steady_clock::time_point> next;
    for (auto it = m_remoteClaims.begin(); it != m_remoteClaims.end();) {
        const auto expires = it->second.heardAt + hold;
        if (expires <= now) {
            m_local.releaseHeldCar(it->first); // only if still held: a booking keeps its car
            it = m_remoteClaims.erase(it);
            continue;
        }
        next = next ? std::min(*next, expires) : expires;
        ++it;
    }
    return next;
}

void ClusterFleet::signalChanges(const FleetDelta &delta)
{
    if (!m_signalled.load(std::memory_order_relaxed))
        return;
    QList<int> cars;
    QList<qint64> versions;
    QList<quint64> bookings;
    if (delta.kind == FleetDelta::Kind::Cars) {
        cars.reserve(qsizetype(delta.cars.size()));
        versions.reserve(qsizetype(delta.cars.size()));
        for (const CarSnapshot &car : delta.cars) {
            cars << car.id;
            versions << car.updatedMs;
        }
    } else if (delta.kind == FleetDelta::Kind::Booking) {
        bookings << delta.booking.id;
        if (delta.booking.carId > 0) {
            cars << delta.booking.carId;
            versions << 0; // the booking's state, not a position: no version to wait for
        }
    } else {
        return; // a claim holds or frees a free car: no booking follows it
    }
    Q_EMIT fleetChanged(cars, versions, bookings);
}

void ClusterFleet::connectNotify(const QMetaMethod &signal)
{
    if (signal != QMetaMethod::fromSignal(&ClusterFleet::fleetChanged))
        return;
    m_signalled.store(true, std::memory_order_relaxed);
    if (!m_primary)
        startHints();
}

void ClusterFleet::startHints()
{
    // A worker does not apply the channel (its primary does, into the region they share); it only
    // listens, to know when to look.
    std::lock_guard lock(m_hintsMutex);
    if (m_hints)
        return;
    m_hints = std::make_unique<RedisSubscriber>(
        *parseRedisUrl(m_fleetUrl, nullptr), QList<QByteArray>{QByteArray(kChannel)},
        [this](const QByteArray &, const QByteArray &payload) {
            if (const auto deltas = decodeFleetMessage(payload))
                for (const FleetDelta &delta : *deltas)
                    signalChanges(delta);
        },
        [this] { Q_EMIT fleetReloaded(); });
}

void ClusterFleet::reloadLiveView()
{
    {
        std::lock_guard lock(m_pendingMutex);
        m_resyncWanted = true; // bookings announced while this node was not listening
    }
    m_flushWake.notify_one();
    m_redis->command({QByteArrayLiteral("HGETALL"), QByteArray(kCarsKey)}, [this](const RedisReply &reply) {
        if (reply.type != RedisReply::Type::Array)
            return;
        std::vector<QByteArray> present;
        present.reserve(reply.elements.size() / 2);
        for (std::size_t i = 1; i < reply.elements.size(); i += 2) {
            present.push_back(reply.elements[i - 1].text);
            if (const auto car = decodeCar(reply.elements[i].text))
                m_local.applyRemotePosition(*car);
        }
        m_view.noteMissing(present, m_local.carCount());
        if (m_signalled.load(std::memory_order_relaxed))
            Q_EMIT fleetReloaded();
    });
}

void ClusterFleet::checkLiveView()
{
    // HLEN costs Redis nothing; the names of every car (HKEYS, O(fleet)) only when some are missing.
    m_redis->command({QByteArrayLiteral("HLEN"), QByteArray(kCarsKey)}, [this](const RedisReply &length) {
        if (length.type != RedisReply::Type::Integer || length.integer >= m_local.carCount())
            return;
        m_redis->command({QByteArrayLiteral("HKEYS"), QByteArray(kCarsKey)}, [this](const RedisReply &reply) {
            if (reply.type != RedisReply::Type::Array)
                return;
            std::vector<QByteArray> present;
            present.reserve(reply.elements.size());
            for (const RedisReply &field : reply.elements)
                present.push_back(field.text);
            m_view.noteMissing(present, m_local.carCount());
        });
    });
}

ClusterFleet::Stats ClusterFleet::stats() const
{
    return {m_applied.load(std::memory_order_relaxed),
            m_unreadable.load(std::memory_order_relaxed),
            m_published.load(std::memory_order_relaxed),
            m_resyncs.load(std::memory_order_relaxed),
            m_flushes.load(std::memory_order_relaxed),
            m_placesAsSent.load(std::memory_order_relaxed),
            m_view.carsMissed(),
            m_view.carsRepaired()};
}

} // namespace taxicore
