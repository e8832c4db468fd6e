#pragma once

#include "fleet/FleetTypes.h"
#include "region/Clock.h"
#include "region/RegionLayout.h"

#include <QString>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace taxicore {

class SharedRegion;

namespace city {
class City;
}

// The fleet and its bookings: the seam between what serves riders (http/, dispatch/) and where the
// fleet lives. The embedded default is SharedMemoryFleet (every process of this machine maps one
// region); a cluster backend keeps the truth elsewhere (a database) behind the same calls. All
// operations are safe to call concurrently from many threads and processes.
//
// How a backend that commits remotely fits: moves are already two steps (begin*() reserves, the
// caller commits the ledger record, settle() applies or drops) and book()/reassign() take their car
// with a compare-and-swap that may lose to another booker, in which case they try the next
// candidate. A database backend does that CAS inside its commit; readers (car, nearby, booking)
// may answer from a local copy fed by the backend's change feed.
//
// Besides the fleet, every backend gives access to the blocks of this node's region (workers,
// control, pricing), which stay on the machine whatever holds the fleet.
class FleetStore {
public:
    virtual ~FleetStore() = default;
    FleetStore(const FleetStore &) = delete;
    FleetStore &operator=(const FleetStore &) = delete;

    // The backend named by `url`: empty or "shm:" is the embedded shared-memory fleet in `region`.
    // Null with `error` set for any other (a cluster's redis:// is opened by cluster/FleetBackend).
    static std::unique_ptr<FleetStore> open(SharedRegion &region, const QString &url, QString *error);

    // Primary only, once: places `count` available cars with positions from `place(id)`.
    virtual void initialiseCars(int count, const std::function<LatLng(int id)> &place) = 0;

    // Every position written from now on is also located on `roads` (CarSnapshot::road: its
    // snap, so nearby's road ETAs need not snap each car again); null: none is. Safe while other
    // threads write positions. A process without it (no city) stores positions unlocated.
    virtual void locateOnRoads(std::shared_ptr<const city::City> roads) = 0;

    virtual int carCount() const = 0;
    virtual std::optional<CarSnapshot> car(int id) const = 0;
    // Writes a reported or simulated position; drives the arrival of an assigned car.
    // `fromDevice` pauses the simulator for this car for a while.
    virtual std::optional<CarSnapshot> updatePosition(int id, LatLng position, float heading, float speedKmh,
                                                      bool fromDevice) = 0;
    // Takes back an arrival updatePosition made whose record the ledger did not take: booking `id`
    // is assigned to car `carId` again (the car's next report at the pickup makes the arrival, and
    // its record, again). Nothing when the booking moved on since. True when undone.
    virtual bool undoArrival(uint64_t id, int carId) = 0;
    // The simulator's live ETA (simulated seconds) of an assigned booking's car to its pickup.
    virtual void setEta(uint64_t id, uint32_t etaS) = 0;
    // Where a trip booked without a drop-off goes: the simulator chooses it once on board.
    virtual void setDestination(uint64_t id, LatLng destination) = 0;
    // True while a real device reports this car: the simulator must not move it.
    virtual bool isDeviceDriven(int id) const = 0;
    virtual std::vector<NearbyCar> nearby(LatLng centre, double radiusM, int limit,
                                          bool availableOnly = false) const = 0;

    // IdsUnavailable: a cluster node could not get a booking id from its database (it is down).
    enum class BookResult { Booked, NoCarAvailable, CapacityFull, IdsUnavailable };
    struct Booking {
        BookResult result = BookResult::NoCarAvailable;
        BookingSnapshot booking;
        CarSnapshot car;
    };
    // Seconds each candidate needs to reach the pickup (infinity: cannot), in the given order.
    using EtaRanker = std::function<std::vector<double>(LatLng pickup, const std::vector<LatLng> &cars)>;
    // Reserves the available car with the smallest ETA among the nearest ones (CAS
    // Available → ToPickup: never two bookings on one car) and creates the booking, assigned.
    // `riderTokenHash` (http/SecretToken.h) is kept with it: only that rider may move it.
    virtual Booking book(const QString &riderId, LatLng pickup, std::optional<LatLng> dropoff, double radiusM,
                         const EtaRanker &etas, const QByteArray &riderTokenHash = {}) = 0;

    virtual std::optional<BookingSnapshot> booking(uint64_t id) const = 0;
    // Puts back a booking read from the ledger after a restart, reserving its car again. With
    // `progress`, the car stands where it was checkpointed and a trip keeps its metres and time on
    // board. False when the car does not exist or is already taken.
    virtual bool restoreBooking(const BookingSnapshot &booking, const TripProgress &progress = {}) = 0;
    // The newest bookings first, at most `max`.
    virtual std::vector<BookingSnapshot> recentBookings(int max) const = 0;

    // Pickup, complete and cancel in two steps, so what every process sees changes only once the
    // ledger holds the move (issue 15 item 6): begin*() checks the move is legal and reserves the
    // booking for it, changing nothing anyone reads; settle() applies it after the ledger committed
    // its record, or drops it when the commit failed, so state and ledger always agree. While a
    // move is reserved, every other move of that booking gets MoveInProgress.
    enum class TransitionResult { Done, NotFound, IllegalState, MoveInProgress };
    struct Transition {
        TransitionResult result = TransitionResult::NotFound;
        BookingSnapshot booking; // as it is after the move (begun: as it will be), else as it is
    };
    virtual Transition beginPickup(uint64_t id) = 0;
    // The trip's distance from the car's odometer, its fare from `fareFor(distance, secs)`.
    virtual Transition beginComplete(uint64_t id,
                                     const std::function<double(double distanceM, double seconds)> &fareFor) = 0;
    virtual Transition beginCancel(uint64_t id) = 0;
    // Nobody boarded within the pickup timeout: the booking ends and its car is free again.
    virtual Transition beginExpire(uint64_t id) = 0;
    // `move` is what a begin*() answered Done; returns the booking as it is now.
    virtual Transition settle(const Transition &move, bool committed) = 0;
    // begin + settle at once, for callers without a ledger to wait for.
    Transition pickup(uint64_t id) { return settle(beginPickup(id), true); }
    Transition complete(uint64_t id, const std::function<double(double distanceM, double seconds)> &fareFor)
    {
        return settle(beginComplete(id, fareFor), true);
    }
    Transition cancel(uint64_t id) { return settle(beginCancel(id), true); }

    // MoveInProgress: another move of the booking (a reassign, a pickup, a cancel) awaits the ledger.
    enum class ReassignResult { Done, NotFound, IllegalState, CarUnavailable, MoveInProgress };
    struct Reassignment {
        ReassignResult result = ReassignResult::NotFound;
        BookingSnapshot booking; // after the move (begun: as it will be), or as it is when refused
        CarSnapshot car;         // the new car when done
        int previousCarId = 0;
    };
    // Gives an assigned or arriving booking another car, in two steps like the other moves:
    // beginReassign() takes the new car (`carId`, or with 0 the available car with the smallest ETA
    // near the pickup) with the same CAS as book() (never two bookings on one car) and reserves the
    // booking for the move; settleReassign() then, once the ledger committed it, assigns the
    // booking to the new car with a fresh ETA and frees the old one, or, when the commit failed,
    // frees the new car and leaves the booking as the ledger has it. CarUnavailable: the named car
    // is not available, or none is. MoveInProgress from the other moves while it is reserved.
    virtual Reassignment beginReassign(uint64_t id, int carId, double radiusM, const EtaRanker &etas) = 0;
    // `move` is what beginReassign() answered Done; returns the booking as it is now.
    virtual Reassignment settleReassign(const Reassignment &move, bool committed) = 0;
    // Both at once, for callers without a ledger to wait for.
    Reassignment reassign(uint64_t id, int carId, double radiusM, const EtaRanker &etas)
    {
        const Reassignment begun = beginReassign(id, carId, radiusM, etas);
        return begun.result == ReassignResult::Done ? settleReassign(begun, true) : begun;
    }

    // A move reserved by one process and settled by it. If that process dies in between (a worker
    // killed while its commit was in flight), the move would hold the booking for good; the primary
    // settles it instead, as the ledger has the booking (dispatch/AbandonedMoves).
    struct PendingMove {
        uint64_t bookingId = 0;
        BookingState to = BookingState::Requested; // Assigned: a reassign
        int newCarId = 0;                          // a reassign's new car
    };
    // The moves process `pid` reserved and has not settled.
    virtual std::vector<PendingMove> movesPendingFor(int pid) const
    {
        (void)pid;
        return {};
    }
    // The open bookings process `pid` made (book()); a booking it made and could not commit before
    // it died is in no ledger, was never acknowledged, and is withdrawn (dispatch/AbandonedMoves).
    virtual std::vector<uint64_t> openBookingsMadeBy(int pid) const
    {
        (void)pid;
        return {};
    }
    // True when an open booking was answered (or is being recorded) under this rider token hash:
    // a keyed retry's first try, still waiting for its commit. Scans the fleet: for the rare retry.
    virtual bool holdsOpenBookingWithToken(const QByteArray &riderTokenHash) const
    {
        (void)riderTokenHash;
        return false;
    }
    // The cars dead process `pid` had taken for a booking or a reassign in flight (region/
    // RegionLayout.h, carClaim): each goes to the booking it had written by then, else is free
    // again. Call before settling its moves and bookings; returns how many cars it had claimed.
    virtual int settleCarClaimsOf(int pid)
    {
        (void)pid;
        return 0;
    }
    // Settles `move` of dead process `pid`: applied as `recorded` (the booking as the ledger has it
    // now) when the ledger holds the move, else let go. True when it was applied.
    virtual bool settleAbandoned(int pid, const PendingMove &move, const std::optional<BookingSnapshot> &recorded)
    {
        (void)pid;
        (void)move;
        (void)recorded;
        return false;
    }

    // What a cluster backend needs to hear (cluster/ClusterFleet); the embedded fleet ignores both.
    // Booking `id` is in the ledger now (booked, moved, reassigned): tell the other nodes.
    virtual void announce(uint64_t bookingId) { (void)bookingId; }
    // The ledger refused a booking because another node claimed `carId` first (the claim is the
    // database's): keep the car out of this node's candidates until the other booking is seen.
    virtual void carTakenElsewhere(int carId) { (void)carId; }
    // The ledger refused a booking because its id holds another booking (an id handed out twice):
    // take the next ids from elsewhere (a cluster skips its block of the sequence). The embedded
    // fleet's counter moves on by itself.
    virtual void bookingIdTaken() {}
    // A booking the ledger did not take (refused or unavailable) is dropped again: its car is free.
    // Never announced: the other nodes never heard of it (a cluster only told them its car's claim).
    virtual void withdraw(uint64_t bookingId) { cancel(bookingId); }

    // This node's region: its worker slots, run-wide control and pricing blocks.
    WorkerSlot &workerSlot(int index) const;
    ControlBlock &control() const;
    // Tariff, surge grid, demand rate and booking prices (pricing/PricingBoard reads and writes it).
    PricingBlock &pricing() const;

    // Simulated seconds per real second of this run (--sim-speed; 1 until the primary sets it).
    double simSpeed() const;
    // Simulated seconds between two wall-clock times: the one time base of ETAs, trip durations
    // and time charges.
    double simulatedSeconds(int64_t fromMs, int64_t toMs) const;
    // Simulated seconds from a booking's instant until now: on this host's monotonic clock when the
    // instant has a stamp there (BookingSnapshot::createdMonoMs, pickupMonoMs), else on the wall
    // clock from `wallMs`.
    double simulatedSecondsSince(int64_t monotonicMs, int64_t wallMs) const;

protected:
    explicit FleetStore(SharedRegion &region);
    char *regionBase() const { return m_base; }

private:
    char *m_base;
};

} // namespace taxicore
