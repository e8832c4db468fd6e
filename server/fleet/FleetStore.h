#pragma once

#include "fleet/FleetTypes.h"
#include "region/Clock.h"
#include "region/RegionLayout.h"

#include <functional>
#include <optional>
#include <vector>

namespace taxicore {

class SharedRegion;

// The fleet and its bookings over the shared-memory region: every process (and every thread)
// uses this one code path. All operations are safe to call concurrently from many processes.
class FleetStore {
public:
    explicit FleetStore(SharedRegion &region);

    // Primary only, once: places `count` available cars with positions from `place(id)`.
    void initialiseCars(int count, const std::function<LatLng(int id)> &place);

    int carCount() const;
    std::optional<CarSnapshot> car(int id) const;
    // Writes a reported or simulated position; drives the arrival of an assigned car.
    // `fromDevice` pauses the simulator for this car for a while.
    std::optional<CarSnapshot> updatePosition(int id, LatLng position, float heading, float speedKmh,
                                              bool fromDevice);
    // The simulator's live ETA (simulated seconds) of an assigned booking's car to its pickup.
    void setEta(uint64_t id, uint32_t etaS);
    // Where a trip booked without a drop-off goes: the simulator chooses it once on board.
    void setDestination(uint64_t id, LatLng destination);
    // True while a real device reports this car: the simulator must not move it.
    bool isDeviceDriven(int id) const;
    std::vector<NearbyCar> nearby(LatLng centre, double radiusM, int limit,
                                  bool availableOnly = false) const;

    enum class BookResult { Booked, NoCarAvailable, CapacityFull };
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
    Booking book(const QString &riderId, LatLng pickup, std::optional<LatLng> dropoff,
                 double radiusM, const EtaRanker &etas, const QByteArray &riderTokenHash = {});

    std::optional<BookingSnapshot> booking(uint64_t id) const;
    // Puts back a booking read from the ledger after a restart, reserving its car again. With
    // `progress`, the car stands where it was checkpointed and a trip keeps its metres and time on
    // board. False when the car does not exist or is already taken.
    bool restoreBooking(const BookingSnapshot &booking, const TripProgress &progress = {});
    // The newest bookings first, at most `max`.
    std::vector<BookingSnapshot> recentBookings(int max) const;

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
    Transition beginPickup(uint64_t id);
    // The trip's distance from the car's odometer, its fare from `fareFor(distance, secs)`.
    Transition beginComplete(uint64_t id, const std::function<double(double distanceM, double seconds)> &fareFor);
    Transition beginCancel(uint64_t id);
    // Nobody boarded within the pickup timeout: the booking ends and its car is free again.
    Transition beginExpire(uint64_t id);
    // `move` is what a begin*() answered Done; returns the booking as it is now.
    Transition settle(const Transition &move, bool committed);
    // begin + settle at once, for callers without a ledger to wait for.
    Transition pickup(uint64_t id) { return settle(beginPickup(id), true); }
    Transition complete(uint64_t id, const std::function<double(double distanceM, double seconds)> &fareFor)
    {
        return settle(beginComplete(id, fareFor), true);
    }
    Transition cancel(uint64_t id) { return settle(beginCancel(id), true); }

    enum class ReassignResult { Done, NotFound, IllegalState, CarUnavailable };
    struct Reassignment {
        ReassignResult result = ReassignResult::NotFound;
        BookingSnapshot booking; // after the move, or as it is when refused
        CarSnapshot car;         // the new car when done
        int previousCarId = 0;
    };
    // Gives an assigned or arriving booking another car: `carId`, or with 0 the available car with
    // the smallest ETA near the pickup. The new car is taken with the same CAS as book() (never
    // two bookings on one car), the old one becomes available, the booking is assigned again with
    // a fresh ETA. CarUnavailable: the named car is not available, or none is.
    Reassignment reassign(uint64_t id, int carId, double radiusM, const EtaRanker &etas);

    WorkerSlot &workerSlot(int index) const;
    ControlBlock &control() const;
    // Tariff, surge grid, demand rate and booking prices (pricing/PricingBoard reads and writes it).
    PricingBlock &pricing() const;

    // Simulated seconds per real second of this run (--sim-speed; 1 until the primary sets it).
    double simSpeed() const;
    // Simulated seconds between two wall-clock times: the one time base of ETAs, trip durations
    // and time charges.
    double simulatedSeconds(int64_t fromMs, int64_t toMs) const;

private:
    CarSlot *carSlot(int id) const;
    PackedPosition *packedPositions() const;
    BookingSlot &bookingSlot(uint64_t id) const;
    void writePosition(CarSlot &slot, LatLng position, float heading, float speedKmh, bool moved);
    void markArrivedIfAtPickup(int carId, uint64_t bookingId, LatLng position);
    void releaseCar(int carId, uint64_t bookingId);
    // Takes (CAS Available → ToPickup) the available car with the smallest ETA to `pickup`, as
    // book() and reassign() both need; 0 when none.
    struct ReservedCar {
        int id = 0;
        double etaS = 0;
    };
    ReservedCar reserveBestCar(LatLng pickup, double radiusM, const EtaRanker &etas);
    // Locks booking `id` and, if the state machine allows `to` and no other move is reserved,
    // reserves it for `to`; `fill` writes the move's values into the returned snapshot.
    template<typename Fill>
    Transition beginTransition(uint64_t id, BookingState to, Fill fill);

    char *m_base;
};

} // namespace taxicore
