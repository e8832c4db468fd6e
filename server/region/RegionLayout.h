#pragma once

// The layout of the shared-memory region every process maps (docs/ARCHITECTURE.md
// §5). Only fixed-size slots of lock-free atomics and plain data, addressed by offsets:
// the region is mapped at a different address in each process.

#include "region/WorkerProtocol.h"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace taxicore {

inline constexpr uint32_t kRegionMagic = 0x54584331; // "TXC1"
inline constexpr uint32_t kRegionVersion = 15; // 6: the nearby grid; 7: each car's road place; 8: passedAdopted; 9:
                                               // bookings' monotonic stamps; 10: each process's ledger counters;
                                               // 11: who made a booking and began its pending move, a
                                               // reassign's new car; 12: a car's claim (carClaim);
                                               // 13: each client's open bookings (RateBucket);
                                               // 14: each client's open connections (ClientConnections);
                                               // 15: each process's live feed clients (feedClients)
// Cars of one region. 100,000 for the fleet micro-benchmark: pages of slots never written are
// never allocated (a memfd), so a 500-car server keeps its few hundred KB of cars.
inline constexpr int kMaxCars = 100'000;
inline constexpr int kBookingCapacity = 32768; // a ring; open bookings are never overwritten
inline constexpr int kMaxWorkers = 32;         // slot 0 is the primary / in-process server
inline constexpr int kRiderIdBytes = 64;

static_assert(std::atomic<double>::is_always_lock_free, "shared memory needs lock-free atomics");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "shared memory needs lock-free atomics");

// One car. Position fields are written under a seqlock (seq odd while a writer is inside) so a
// reader gets lat, lng, heading and speed from the same update.
struct alignas(64) CarSlot {
    std::atomic<uint32_t> seq;
    std::atomic<uint32_t> state; // CarState; booking is a CAS Available → ToPickup
    std::atomic<double> lat;
    std::atomic<double> lng;
    std::atomic<float> heading;
    std::atomic<float> speedKmh;
    std::atomic<uint64_t> bookingId; // 0, the booking's id, or carClaim(pid) while a booking takes it
    std::atomic<int64_t> updatedMs;
    std::atomic<double> odometerM;      // metres driven since start; fares use its deltas
    std::atomic<int64_t> deviceUntilMs; // a real device reported: the simulator leaves it alone
};

// What CarSlot::bookingId holds while a process takes the car for a booking or a reassign that is
// not the car's yet (its id is being fetched, its ETA ranked, its slot written): the top bit, never
// set in a booking id, and the taker's pid. A process killed in between leaves its claim behind,
// so the primary can tell whose the car was and free it (FleetStore::settleCarClaimsOf); without it
// the car stayed out of service, named by no booking, until a restart.
inline constexpr uint64_t kCarClaimBit = uint64_t(1) << 63;
inline constexpr uint64_t carClaim(int pid)
{
    return kCarClaimBit | static_cast<uint32_t>(pid);
}
inline constexpr bool isCarClaim(uint64_t bookingWord)
{
    return (bookingWord & kCarClaimBit) != 0;
}

// One booking. Fields after `lock` are guarded by it (a cross-process spinlock).
struct BookingSlot {
    std::atomic<uint32_t> lock;
    std::atomic<uint64_t> id; // 0 = never used; slot = id % kBookingCapacity
    uint32_t state;
    int32_t carId;
    char riderId[kRiderIdBytes];
    double pickupLat, pickupLng;
    double dropoffLat, dropoffLng;
    uint32_t hasDropoff;
    uint32_t etaS;
    uint32_t pendingMove; // BookingState a move awaits the ledger for (kPendingReassign: a reassign); 0 = none
    // The process that began the pending move: if it dies before settling it (a worker killed while
    // its commit was in flight), the primary settles it from the ledger (dispatch/AbandonedMoves).
    int32_t pendingPid;
    int32_t pendingCarId; // a pending reassign's new car, reserved (ToPickup) until it settles
    // The process that made the booking (0: restored from the ledger, or another node's): if it
    // dies before the booking's commit, the primary withdraws a booking the ledger never got.
    int32_t createdPid;
    int64_t createdMs, arrivedMs, pickupMs, endedMs;
    double startOdometerM;
    double distanceM; // final, when completed
    double fare;      // final, when completed
    // First bytes of SHA-256 of the rider token the booking was answered with (all zero: none,
    // e.g. restored from a ledger older than schema 3): only its holder may move the booking.
    uint8_t riderTokenHash[16];
    // Where the car heads on a trip booked without a drop-off (the simulator chooses it).
    uint32_t hasDestination;
    double destinationLat, destinationLng;
    double durationS;                    // simulated seconds on board, when completed
    int64_t createdMonoMs, pickupMonoMs; // BookingSnapshot::createdMonoMs, pickupMonoMs
};

// Per-process serving counters; the console and /metrics sum them over every slot.
inline constexpr int kLatencyBuckets = 64; // bucket i holds latencies < 2^(i/2) µs (half-octaves)
inline constexpr int kStatusKinds = 16;    // see metrics/MetricsLimits.h (kCountedStatuses)
inline constexpr int kRouteKinds = 64;     // route ids (RouteTable: 1 + registration order); 0 = unmatched

struct alignas(64) WorkerSlot {
    std::atomic<int32_t> pid;
    std::atomic<WorkerSlotState> state; // region/WorkerProtocol.h
    std::atomic<uint32_t> restarts;
    std::atomic<int64_t> startedMs;
    std::atomic<int64_t> heartbeatMs;
    std::atomic<int64_t> loopLagUs;
    std::atomic<uint64_t> requests;
    std::atomic<uint64_t> inFlight;
    std::atomic<uint64_t> openConnections;
    // Live feed WebSockets open (http/LiveFeed): an upgraded socket leaves openConnections.
    std::atomic<uint64_t> feedClients;
    // Connections the primary passed that this worker adopted, counted at once (the primary hears
    // of each adoption later, through the supervisor): least-loaded's count must not take one for
    // both open here and still on its way (runtime/ConnectionDispatcher.cpp).
    std::atomic<uint64_t> passedAdopted;
    std::atomic<uint64_t> latencySumUs;
    std::atomic<uint64_t> latency[kLatencyBuckets];
    std::atomic<uint64_t> byRouteStatus[kRouteKinds][kStatusKinds];
    // This slot's processes' ledger (runtime/LedgerStatsPublisher): records committed and refused
    // so far, and 1 while the last transaction failed.
    std::atomic<uint64_t> ledgerCommitted;
    std::atomic<uint64_t> ledgerFailed;
    std::atomic<uint32_t> ledgerFailing;
};

inline constexpr int kEventSlots = 256;
inline constexpr int kEventTextBytes = 160;

// One entry of the run's event log (mode switches, crashes, respawns), a ring in the region.
struct EventSlot {
    std::atomic<uint64_t> sequence; // 0 = empty; written last
    int64_t timeMs;
    char kind[24];
    char text[kEventTextBytes];
};

// Operator access and the booking rate limit, the same for every process: the primary writes
// the settings before any worker starts; the buckets are shared so the limit holds across workers.
inline constexpr int kAdminTokenBytes = 160;
inline constexpr int kRateBuckets = 4096; // clients tracked at once; the stalest is evicted

// The most bookings --open-bookings-per-client may let one client address hold open at once
// (http/OpenBookingsPerClient): the places each client's bucket has.
inline constexpr int kMaxOpenBookingsPerClient = 32;
inline constexpr uint64_t kBookingBeingMade = ~uint64_t(0); // a place held until the booking is answered

struct RateBucket {
    uint8_t client[16]; // the peer address (IPv4 mapped into IPv6); all zero = free
    double tokens;
    int64_t updatedMs;
    // The client's open bookings by id (0: a free place; kBookingBeingMade: held for a booking
    // not answered yet, until heldUntilMs on the monotonic clock).
    uint64_t openBookings[kMaxOpenBookingsPerClient];
    int64_t heldUntilMs[kMaxOpenBookingsPerClient];
};

// The connections each client address has open on this machine (http/ConnectionsPerClient,
// --max-connections-per-client): an entry per address while it has any open, none kept after, so
// an address is never evicted while it holds connections. Each process counts the connections it
// holds in the column of its worker slot (0: the primary), so the primary gives back a dead
// worker's (kill -9) by clearing its column when the supervisor sees it die.
inline constexpr int kConnectionClients = 16384; // addresses with connections open, tracked at once
inline constexpr int kConnectionProbe = 64;      // entries after an address's home it may live in

struct ClientConnections {
    uint8_t client[16];         // IPv4 mapped into IPv6, IPv6 by its /64; all zero = free
    uint16_t open[kMaxWorkers]; // by worker slot; --max-connections-per-client is at most 65535
};

struct AccessBlock {
    char adminToken[kAdminTokenBytes];  // NUL-terminated
    char deviceToken[kAdminTokenBytes]; // PUT /api/v1/cars/{id}/position; NUL-terminated
    uint32_t trustLoopback;
    double bookingRatePerMinute;
    double bookingBurst;
    uint32_t openBookingsPerClient;    // 0: no limit
    std::atomic<uint32_t> bucketsLock; // one cross-process lock: a booking is far costlier
    RateBucket buckets[kRateBuckets];
    // Keys the table's hash (random per run, written by the primary before any worker starts), so
    // no client can pick addresses that crowd one part of it.
    uint64_t connectionsSeed;
    std::atomic<uint32_t> connectionsLock; // one cross-process lock, apart from the booking buckets'
    ClientConnections connections[kConnectionClients];
};

// Run-wide control: the runtime settings applied now (published by the primary, read by
// anyone), a mailbox through which a worker asks the primary to apply new ones, the event log.
struct ControlBlock {
    std::atomic<uint32_t> mode; // RuntimeMode
    std::atomic<uint32_t> generation;
    std::atomic<uint64_t> nextBookingId;
    std::atomic<int32_t> carCount;
    std::atomic<int64_t> startedMs;
    std::atomic<int32_t> workers;
    std::atomic<int32_t> threads;
    std::atomic<uint32_t> policy; // DistributionPolicy

    std::atomic<uint32_t> mailboxLock;
    std::atomic<uint64_t> requestSequence; // bumped by the asker after writing the request
    std::atomic<uint64_t> appliedSequence; // set by the primary after applying it
    // One change at a time (RuntimeMailbox): the mailbox is busy until the asker of the newest
    // request took its answer or withdrew (collectedSequence), or until requestDeadlineMs passed.
    std::atomic<uint64_t> collectedSequence;
    int64_t requestDeadlineMs;                                          // clock::monotonicMs()
    int32_t requestMode, requestWorkers, requestThreads, requestPolicy; // -1 = unchanged
    uint64_t replySequence;                                             // the request answered
    int32_t replyMode, replyWorkers, replyThreads, replyPolicy;         // what it put in force
    uint32_t replyGeneration;
    char replyError[kEventTextBytes]; // empty = applied

    std::atomic<uint64_t> nextEvent;
    EventSlot events[kEventSlots];

    // Run-wide simulation settings, written by the primary before any worker starts: simulated
    // seconds per real second (the one time base of ETAs, durations and time charges) and the
    // simulated seconds a booking may wait for its pickup before it expires.
    std::atomic<double> simSpeed;
    std::atomic<int32_t> pickupTimeoutS;

    AccessBlock access;
};

// Pricing shared by every process (issue 4): the tariff in force (the operator may change it
// at runtime), the demand generator's rate, the surge grid the primary publishes, and what each
// booking was quoted (its surge captured at booking time, so the fare equals the quote).
inline constexpr int kMaxSurgeCells = 4096;
inline constexpr int kCurrencyBytes = 8;

struct TariffSlot {
    std::atomic<uint32_t> lock;    // a SlotLock; fields below are guarded by it
    std::atomic<uint64_t> version; // 0 = never set: the built-in defaults apply
    char currency[kCurrencyBytes];
    double base, perKm, perMinute, minimum;
    double surgeCap, surgePerExcess, surgeSmoothingS;
};

struct SurgeGridSlot {
    std::atomic<int32_t> rows; // 0 = not published yet (surge 1 everywhere)
    std::atomic<int32_t> cols;
    std::atomic<double> south, west, cellLatDeg, cellLngDeg;
    std::atomic<int64_t> updatedMs;
    std::atomic<float> surge[kMaxSurgeCells]; // row-major, south-west first
};

struct BookingPriceSlot {
    std::atomic<uint64_t> bookingId; // written last; 0 while being written. slot = id % kBookingCapacity
    std::atomic<double> surge;
    std::atomic<uint32_t> hasQuote;
    std::atomic<double> quotedDistanceM, quotedDurationS;
    std::atomic<double> base, distanceCharge, timeCharge, minimum, total; // the quote's breakdown
};

struct PricingBlock {
    TariffSlot tariff;
    std::atomic<double> demandRidesPerMinute;
    SurgeGridSlot surge;
    BookingPriceSlot bookings[kBookingCapacity];
};

// A packed copy of each car's position that nearby() scans first: 8 bytes a car, so 10,000 cars
// are 80 KB to read instead of 640 KB of CarSlots. A float is exact to about half a metre here;
// the copy only pre-selects cars, the CarSlot holds the position that counts.
struct PackedPosition {
    std::atomic<float> lat;
    std::atomic<float> lng;
};

// The nearby grid (fleet/SharedMemoryFleet): every car is listed in the cell of its position, so
// nearby() reads the cars of the cells around the query, not the whole fleet. Cells wrap around
// (a torus of kGridSide x kGridSide) so any position on Earth has one. A cell's list is changed
// under its seqlock `seq` (readers retry, never block a writer); `writing` stays 1 while a writer
// is inside, so the next writer knows one died there and rebuilds the list.
inline constexpr int kGridSideBits = 9;
inline constexpr int kGridSide = 1 << kGridSideBits;
inline constexpr int kGridCells = kGridSide * kGridSide;

struct GridCell {
    std::atomic<uint32_t> seq;
    std::atomic<uint32_t> writing;
    std::atomic<int32_t> head; // first car's index + 1; 0 = empty
    uint32_t unused;
};

// A car's place in its cell's list (index + 1 of its neighbours; 0 = none) and the cell it is
// listed in (+ 1; 0 = none), all changed only under that cell's seqlock.
struct GridLink {
    std::atomic<int32_t> next;
    std::atomic<int32_t> prev;
    std::atomic<int32_t> cell;
};

// Where each car's position lies on the road network (fleet/SharedMemoryFleet): the segment and
// offset of the city's snap of it, written and read with the position under the car's seqlock,
// so nearby's road ETAs start here instead of snapping each car again. Beside CarSlot, not in it:
// nearby's pass over the slots keeps one cache line a car.
struct RoadPlaceSlot {
    std::atomic<uint32_t> segment; // + 1; 0 = not located (no city, or not yet)
    std::atomic<double> offsetM;   // along the segment from its `from` node
};

struct RegionHeader {
    uint32_t magic;
    uint32_t version;
    uint64_t totalBytes;
    uint64_t controlOffset;
    uint64_t carsOffset;
    uint64_t bookingsOffset;
    uint64_t workersOffset;
};

// Byte offsets of each part, computed once; the same in every process.
constexpr std::size_t alignToPage(std::size_t n)
{
    return (n + 4095) & ~std::size_t(4095);
}

struct RegionOffsets {
    static constexpr std::size_t control = alignToPage(sizeof(RegionHeader));
    static constexpr std::size_t cars = control + alignToPage(sizeof(ControlBlock));
    static constexpr std::size_t bookings = cars + alignToPage(sizeof(CarSlot) * kMaxCars);
    static constexpr std::size_t workers = bookings + alignToPage(sizeof(BookingSlot) * kBookingCapacity);
    static constexpr std::size_t pricing = workers + alignToPage(sizeof(WorkerSlot) * kMaxWorkers);
    static constexpr std::size_t positions = pricing + alignToPage(sizeof(PricingBlock));
    static constexpr std::size_t grid = positions + alignToPage(sizeof(PackedPosition) * kMaxCars);
    static constexpr std::size_t gridLinks = grid + alignToPage(sizeof(GridCell) * kGridCells);
    static constexpr std::size_t roadPlaces = gridLinks + alignToPage(sizeof(GridLink) * kMaxCars);
    static constexpr std::size_t total = roadPlaces + alignToPage(sizeof(RoadPlaceSlot) * kMaxCars);
};

} // namespace taxicore
