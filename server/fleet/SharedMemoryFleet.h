#pragma once

#include "fleet/FleetStore.h"

#include <atomic>

namespace taxicore {

// The embedded default fleet: cars and bookings in the shared-memory region every process of this
// machine maps (region/RegionLayout.h). The booking CAS is an atomic compare-and-swap on the car's
// slot; moves are guarded by each booking slot's cross-process lock.
class SharedMemoryFleet final : public FleetStore {
public:
    explicit SharedMemoryFleet(SharedRegion &region);

    void initialiseCars(int count, const std::function<LatLng(int id)> &place) override;
    void locateOnRoads(std::shared_ptr<const city::City> roads) override;
    int carCount() const override;
    std::optional<CarSnapshot> car(int id) const override;
    std::optional<CarSnapshot> updatePosition(int id, LatLng position, float heading, float speedKmh,
                                              bool fromDevice) override;
    bool undoArrival(uint64_t id, int carId) override;
    void setEta(uint64_t id, uint32_t etaS) override;
    void setDestination(uint64_t id, LatLng destination) override;
    bool isDeviceDriven(int id) const override;
    std::vector<NearbyCar> nearby(LatLng centre, double radiusM, int limit, bool availableOnly = false) const override;
    Booking book(const QString &riderId, LatLng pickup, std::optional<LatLng> dropoff, double radiusM,
                 const EtaRanker &etas, const QByteArray &riderTokenHash = {}) override;
    std::optional<BookingSnapshot> booking(uint64_t id) const override;
    bool restoreBooking(const BookingSnapshot &booking, const TripProgress &progress = {}) override;
    std::vector<BookingSnapshot> recentBookings(int max) const override;
    Transition beginPickup(uint64_t id) override;
    Transition beginComplete(uint64_t id,
                             const std::function<double(double distanceM, double seconds)> &fareFor) override;
    Transition beginCancel(uint64_t id) override;
    Transition beginExpire(uint64_t id) override;
    Transition settle(const Transition &move, bool committed) override;
    Reassignment beginReassign(uint64_t id, int carId, double radiusM, const EtaRanker &etas) override;
    Reassignment settleReassign(const Reassignment &move, bool committed) override;
    std::vector<PendingMove> movesPendingFor(int pid) const override;
    int settleCarClaimsOf(int pid) override;
    std::vector<uint64_t> openBookingsMadeBy(int pid) const override;
    // Every open booking the ring holds, whatever its id: a copy's open bookings for a resync.
    std::vector<BookingSnapshot> openBookings() const;
    bool holdsOpenBookingWithToken(const QByteArray &riderTokenHash) const override;
    bool settleAbandoned(int pid, const PendingMove &move, const std::optional<BookingSnapshot> &recorded) override;

    // Booking ids from elsewhere (a cluster's database: ids unique across nodes) instead of this
    // region's counter. The source answers 0 when it cannot give one (book() → IdsUnavailable).
    using IdSource = std::function<uint64_t()>;
    void setIdSource(IdSource source) { m_idSource = std::move(source); }

    // Makes this fleet a cluster node's copy (cluster/ClusterFleet), whose cars' updatedMs is also
    // their version across the copies: a local write stamps max(wall clock, previous + 1), so a
    // node whose clock is behind the others' or was stepped back is still heard, and the start
    // positions are stamped kPlaceholderVersion, so the live view and any move replace them. Alone
    // (the embedded default) updatedMs is the wall clock of the write.
    void versionPositionsAcrossCopies() { m_versionsAcrossCopies = true; }
    static constexpr int64_t kPlaceholderVersion = 1;
    // A cluster node's copy of the fleet (cluster/ClusterFleet) is fed what the other nodes changed.
    // A car's position and heading, when newer (updatedMs) than the one held; this copy's odometer
    // takes the step from the position it held (the sender's odometer is not taken), and the car's
    // trip, when this copy has it on board too, its metres so far as sent (car.tripM). Its road
    // place is the sender's (car.road) when the sender located it as this fleet would (`placesKey`
    // equals placesKey() here) and it names a point of one of this city's segments; else the
    // position is located here (locateOnRoads). It never marks an arrival: the node that moved
    // the car does, and announces the booking.
    enum class RemotePosition { Stale, Located, PlaceAsSent };
    RemotePosition applyRemotePosition(const CarSnapshot &car, uint64_t placesKey = 0);
    // What this fleet locates positions with (locateOnRoads): its city file's checksum mixed with
    // the snapping rules' version (city::City::kSnapRulesVersion); 0 without a city. Two fleets
    // with one key snap every position alike. The city is given once, before positions are
    // written: a place already stored keeps the key it was located with only until then.
    uint64_t placesKey() const;
    // Another node's device reported this car: the simulator leaves it alone here too.
    void markDeviceDriven(int id);
    // A booking as another node committed it: the booking and its car take its state, unless this
    // copy holds a later state of it already (states only move forward, a reassignment replaces
    // the car). An on-trip booking is metered on this copy's odometer (meteredHere). False when its
    // slot holds another open booking (the copy is full).
    bool applyRemoteBooking(const BookingSnapshot &sent);
    // The database says another node holds this car: taken here (booking 0) until its booking's
    // announcement arrives and names it.
    void holdCar(int carId);
    // Frees every car held for a booking that never arrived (a resync found no claim of it in the
    // database: the other node's booking failed, or ended while its messages were lost).
    int releaseHeldCars();
    // Frees one held car, unless a booking has it by now.
    void releaseHeldCar(int carId);

private:
    bool releaseIfHeld(CarSlot &car);
    // After a remote position of a car on a trip: this copy's trip goes on from the metres on
    // board its sender counted (remote.tripM) at that position, `odometer` on this copy's.
    void takeTripMetres(const CarSnapshot &remote, double odometer);
    // `sent` (another node's booking) as this copy stores it: an on-trip one metered on this
    // host's odometer (BookingSnapshot::startOdometerM), from the metres its sender counted so far
    // unless this copy meters the trip already.
    static BookingSnapshot meteredHere(const BookingSnapshot &sent, const BookingSlot &slot, const CarSlot &car);
    CarSlot *carSlot(int id) const;
    PackedPosition *packedPositions() const;
    GridCell *gridCells() const;
    GridLink *gridLinks() const;
    RoadPlaceSlot *roadPlaces() const;
    // A consistent copy of car `id`'s slot and road place.
    CarSnapshot readCar(const CarSlot &slot, int id) const;
    // Lists car `index` (id - 1) in the grid cell of `position`, out of the one it was in. Called
    // inside the car's seqlock, so one writer at a time places a car.
    void placeInGrid(int index, LatLng position);
    void unlinkFromCell(int cell, int index);
    void linkIntoCell(int cell, int index);
    // A car nearby() may answer with: its planar distance (approximate) and slot index.
    struct NearbyCandidate {
        double approxM;
        int index;
    };
    // What nearby() searches: the box of the packed float positions and the planar metric.
    struct NearbyArea {
        LatLng centre;
        float south, north, west, east;
        double metresPerLatDeg, metresPerLngDeg;
        double reachM;      // radius + tolerance: farther candidates are never kept
        double keepBeyondM; // a candidate is kept up to this far beyond the limit-th nearest
    };
    // Calls `consider(index)` (which may append to `candidates`) for the cars listed in the grid
    // cells of the box, ring by ring outwards from the centre's cell, until every car that can
    // be kept is among the candidates: once `limit` of them are nearer than any car outside the
    // rings read can be (plus keepBeyondM), the rest of the box is not read. False when the box
    // spans too many cells to beat a scan of the fleet, or a cell could not be read consistently
    // (a writer stuck inside it): the caller scans the fleet instead.
    template <typename Consider>
    bool visitGrid(const NearbyArea &area, int limit, int count, std::vector<NearbyCandidate> &candidates,
                   Consider consider) const;
    BookingSlot &bookingSlot(uint64_t id) const;
    void writePosition(CarSlot &slot, LatLng position, float heading, float speedKmh, bool moved);
    // Where `position` lies on the roads: the slot's stored place when it holds that very
    // position already (a car standing still is not snapped again), else a fresh snap.
    RoadPlace locate(const CarSlot &slot, int id, LatLng position) const;
    // The sender's place of a remote position, if the sender located it with this fleet's
    // placesKey and it names a point of one of this city's segments.
    std::optional<RoadPlace> sendersPlace(const CarSnapshot &remote, uint64_t placesKey) const;
    // Stores the position, its road place, its packed copy and its grid cell; inside the car's
    // seqlock.
    void storePosition(CarSlot &slot, LatLng position, const RoadPlace &road);
    void markArrivedIfAtPickup(int carId, uint64_t bookingId, LatLng position);
    void releaseCar(int carId, uint64_t bookingId);
    // Takes a free car for a booking in flight: its bookingId becomes `claim` (carClaim of this
    // process), then its state Available → ToPickup. False when it is not free or another took it.
    bool claimCar(CarSlot &car, uint64_t claim);
    // Frees a car claimed with `claim` that no booking will have, unless another node's committed
    // booking took it meanwhile.
    void giveBackClaimedCar(CarSlot &car, uint64_t claim);
    // Claims the available car with the smallest ETA to `pickup`, as book() and reassign() both
    // need; 0 when none.
    struct ReservedCar {
        int id = 0;
        double etaS = 0;
    };
    ReservedCar reserveBestCar(LatLng pickup, double radiusM, const EtaRanker &etas, uint64_t claim);
    // Locks booking `id` and, if the state machine allows `to` and no other move is reserved,
    // reserves it for `to`; `fill` writes the move's values into the returned snapshot.
    template <typename Fill> Transition beginTransition(uint64_t id, BookingState to, Fill fill);
    uint64_t nextBookingId();

    IdSource m_idSource;
    bool m_versionsAcrossCopies = false;
    std::atomic<std::shared_ptr<const city::City>> m_roads;
};

} // namespace taxicore
