#include "fleet/SharedMemoryFleet.h"

#include "region/SharedRegion.h"
#include "region/SlotLock.h"
#include "city/City.h"
#include "city/Geo.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numbers>
#include <cstring>
#include <ctime>
#include <signal.h>
#include <thread>
#include <unistd.h>
#include <unordered_map>

namespace taxicore {

namespace {

// A car within this distance of its pickup has arrived.
constexpr double kArrivalRadiusM = 40.0;
// A car that reported from a real device is left alone by the simulator this long.
constexpr int64_t kDevicePauseMs = 30'000;
// Nearest cars tried in one booking attempt, and attempts when other bookers race us.
constexpr int kBookingCandidates = 16;
constexpr int kBookingAttempts = 4;
// BookingSlot::pendingMove of a reserved reassign: the booking will be assigned (again), to
// pendingCarId. No other move leads to "assigned", so the value is free for it.
constexpr uint32_t kPendingReassign = static_cast<uint32_t>(BookingState::Assigned);

// The booking a car serves; 0 while it is free, held, or taken by a booking in flight (a claim).
uint64_t bookingOf(const CarSlot &car)
{
    const uint64_t word = car.bookingId.load(std::memory_order_acquire);
    return isCarClaim(word) ? 0 : word;
}

// No move reserved (a booking written anew, or a move settled).
void clearPendingMove(BookingSlot &slot)
{
    slot.pendingMove = 0;
    slot.pendingPid = 0;
    slot.pendingCarId = 0;
}

void reservePendingMove(BookingSlot &slot, uint32_t to, int newCarId = 0)
{
    slot.pendingMove = to;
    slot.pendingPid = static_cast<int32_t>(::getpid()); // not cached: a forked child has its own
    slot.pendingCarId = newCarId;
}

// SharedMemoryFleet::placesKey of a fleet locating on `roads`.
uint64_t placesKeyOf(const city::City &roads)
{
    const uint64_t key =
        roads.data().header->checksum ^ (uint64_t(city::City::kSnapRulesVersion) * 0x9e3779b97f4a7c15ULL);
    return key != 0 ? key : 1; // 0 means "no places"
}

// The nearby grid's cells: 1/800 degree of latitude (~139 m) by 1/500 of longitude (~119 m at
// Gothenburg's 57.7° N). Small enough that in the dense centre of 10,000 cars the 20 nearest come
// from the first ring of 3 x 3 cells; a 1 km search reads at most ~16 x 18. Wrapped every
// kGridSide cells (~71 x 61 km here): only cells that far apart share a list, and nearby()
// filters by position anyway.
constexpr double kGridCellsPerDegreeLat = 800;
constexpr double kGridCellsPerDegreeLng = 500;
// Positions beyond this are clamped before their cell is computed (a device may report anything).
constexpr double kGridClampDeg = 1e6;
// nearby()'s box is in floats (the packed copy) while a car's cell goes by its double position:
// the cells read reach this far (~11 m) beyond the box, far more than float rounding moves it.
constexpr double kGridMarginDeg = 1e-4;
// A cell costs about as much to read as this many cars of a fleet scan: a box with more cells
// than the fleet has cars (times this) is answered by the scan.
constexpr int kGridCellCostInCars = 1;
// Reads of one cell that a writer changed meanwhile before nearby() gives up on the grid for
// this query and scans the fleet (a writer preempted or killed inside its update).
constexpr int kGridReadTries = 64;

BookingSnapshot snapshotOf(const BookingSlot &slot)
{
    BookingSnapshot b;
    b.id = slot.id.load(std::memory_order_relaxed);
    b.state = static_cast<BookingState>(slot.state);
    b.carId = slot.carId;
    b.riderId = QString::fromUtf8(slot.riderId, static_cast<qsizetype>(strnlen(slot.riderId, kRiderIdBytes)));
    b.pickup = {slot.pickupLat, slot.pickupLng};
    b.hasDropoff = slot.hasDropoff != 0;
    b.dropoff = {slot.dropoffLat, slot.dropoffLng};
    b.etaS = slot.etaS;
    b.createdMs = slot.createdMs;
    b.arrivedMs = slot.arrivedMs;
    b.pickupMs = slot.pickupMs;
    b.endedMs = slot.endedMs;
    b.startOdometerM = slot.startOdometerM;
    b.distanceM = slot.distanceM;
    b.fare = slot.fare;
    static const uint8_t noOwner[sizeof slot.riderTokenHash] = {};
    if (std::memcmp(slot.riderTokenHash, noOwner, sizeof noOwner) != 0)
        b.riderTokenHash = QByteArray(reinterpret_cast<const char *>(slot.riderTokenHash), sizeof slot.riderTokenHash);
    b.hasDestination = slot.hasDestination != 0;
    b.destination = {slot.destinationLat, slot.destinationLng};
    b.durationS = slot.durationS;
    b.createdMonoMs = slot.createdMonoMs;
    b.pickupMonoMs = slot.pickupMonoMs;
    return b;
}

// The monotonic stamp of a booking's wall-clock instant `wallMs` (0: none): the one it came with,
// else the one the slot holds for that same instant, else its wall-clock age now (a booking that
// arrived from elsewhere). Wall-clock steps after that no longer reach durations measured from it.
int64_t monotonicStampOf(int64_t wallMs, int64_t given, int64_t held)
{
    if (wallMs == 0)
        return 0;
    if (given != 0)
        return given;
    if (held != 0)
        return held;
    return clock::monotonicMs() - std::max<int64_t>(0, clock::wallMs() - wallMs);
}

// A restored booking's age in real milliseconds: its age at the checkpoint and the wall-clock time
// since, never less than the checkpointed age (a wall clock stepped back since).
int64_t ageAtRestoreMs(const TripProgress &progress, int64_t wallNowMs, double simSpeed)
{
    const int64_t checkpointedMs = std::llround(progress.waitedS / simSpeed * 1000.0);
    return checkpointedMs + std::max<int64_t>(0, wallNowMs - progress.checkpointMs);
}

// The owner's token hash into a slot (zero-padded; empty: no owner).
void writeTokenHash(BookingSlot &slot, const QByteArray &hash)
{
    std::memset(slot.riderTokenHash, 0, sizeof slot.riderTokenHash);
    std::memcpy(slot.riderTokenHash, hash.constData(),
                std::min(sizeof slot.riderTokenHash, static_cast<std::size_t>(hash.size())));
}

// Everything of a booking into its slot but the id (published last, under the slot's lock, by the
// caller) and pendingMove: the one writer of book(), restoreBooking() and applyRemoteBooking(),
// the mirror of snapshotOf().
void writeBookingSlot(BookingSlot &slot, const BookingSnapshot &b)
{
    // Read before the slot is overwritten: a later write of the same booking keeps the stamps its
    // first arrival got, even when its wall-clock instant differs (a resync brings the ledger's
    // pickup time over a restore's, which counts the time on board from the last checkpoint).
    const bool same = slot.id.load(std::memory_order_relaxed) == b.id;
    slot.createdMonoMs = monotonicStampOf(b.createdMs, b.createdMonoMs, same ? slot.createdMonoMs : 0);
    slot.pickupMonoMs = monotonicStampOf(b.pickupMs, b.pickupMonoMs, same ? slot.pickupMonoMs : 0);
    const QByteArray rider = b.riderId.toUtf8().left(kRiderIdBytes - 1);
    std::memset(slot.riderId, 0, sizeof slot.riderId);
    std::memcpy(slot.riderId, rider.constData(), static_cast<std::size_t>(rider.size()));
    writeTokenHash(slot, b.riderTokenHash);
    slot.state = static_cast<uint32_t>(b.state);
    slot.carId = b.carId;
    slot.pickupLat = b.pickup.lat;
    slot.pickupLng = b.pickup.lng;
    slot.hasDropoff = b.hasDropoff;
    slot.dropoffLat = b.dropoff.lat;
    slot.dropoffLng = b.dropoff.lng;
    slot.etaS = b.etaS;
    slot.createdMs = b.createdMs;
    slot.arrivedMs = b.arrivedMs;
    slot.pickupMs = b.pickupMs;
    slot.endedMs = b.endedMs;
    slot.startOdometerM = b.startOdometerM;
    slot.distanceM = b.distanceM;
    slot.fare = b.fare;
    slot.hasDestination = b.hasDestination;
    slot.destinationLat = b.destination.lat;
    slot.destinationLng = b.destination.lng;
    slot.durationS = b.durationS;
}

// recentBookings() walks down from the newest id: ids from elsewhere (a cluster) raise it too.
void raiseNewestBookingId(ControlBlock &control, uint64_t id)
{
    uint64_t newest = control.nextBookingId.load(std::memory_order_relaxed);
    while (newest < id && !control.nextBookingId.compare_exchange_weak(newest, id, std::memory_order_acq_rel)) {
    }
}

// How far along its life a booking is: another node's announcement of a booking applies only when
// it is not behind the state this copy holds.
int lifeStage(BookingState state)
{
    switch (state) {
    case BookingState::Requested:
        return 0;
    case BookingState::Assigned:
        return 1;
    case BookingState::Arriving:
        return 2;
    case BookingState::OnTrip:
        return 3;
    default:
        return 4; // ended
    }
}

CarState carStateFor(BookingState state)
{
    return state == BookingState::OnTrip     ? CarState::OnTrip
           : state == BookingState::Arriving ? CarState::Waiting
                                             : CarState::ToPickup;
}

int64_t gridRow(double lat)
{
    return int64_t(std::floor(std::clamp(lat, -kGridClampDeg, kGridClampDeg) * kGridCellsPerDegreeLat));
}

int64_t gridColumn(double lng)
{
    return int64_t(std::floor(std::clamp(lng, -kGridClampDeg, kGridClampDeg) * kGridCellsPerDegreeLng));
}

int gridCellAt(int64_t row, int64_t column)
{
    constexpr uint64_t kWrap = kGridSide - 1;
    return int(((uint64_t(row) & kWrap) << kGridSideBits) | (uint64_t(column) & kWrap));
}

// The cell a position is listed in; -1 for a position that is not finite (listed nowhere: no
// nearby box contains it either).
int gridCellOf(LatLng position)
{
    if (!std::isfinite(position.lat) || !std::isfinite(position.lng))
        return -1;
    return gridCellAt(gridRow(position.lat), gridColumn(position.lng));
}

// One writer's update of a cell's list, under the cell's seqlock. `abandoned`: the previous
// writer died inside its update (its `writing` mark is still there), so the list may be torn.
class CellUpdate {
public:
    explicit CellUpdate(GridCell &cell)
        : m_cell(cell)
        , m_seq(beginSeqlockWrite(cell.seq))
    {
        std::atomic_thread_fence(std::memory_order_release);
        m_abandoned = cell.writing.exchange(1, std::memory_order_relaxed) != 0;
    }
    ~CellUpdate()
    {
        m_cell.writing.store(0, std::memory_order_relaxed);
        m_cell.seq.store(m_seq + 1, std::memory_order_release);
    }
    CellUpdate(const CellUpdate &) = delete;
    CellUpdate &operator=(const CellUpdate &) = delete;
    bool abandoned() const { return m_abandoned; }

private:
    GridCell &m_cell;
    uint32_t m_seq;
    bool m_abandoned = false;
};

// Relinks every car whose link names `cell`, after a writer died inside an update of its list.
// A car is named only while it is wholly in the list (unlinking clears the name first, linking
// sets it last), so the rebuilt list holds exactly the cars listed there.
void rebuildCell(GridCell &cell, GridLink *links, int cellIndex)
{
    int32_t head = 0;
    for (int i = 0; i < kMaxCars; ++i) {
        if (links[i].cell.load(std::memory_order_relaxed) != cellIndex + 1)
            continue;
        links[i].prev.store(0, std::memory_order_relaxed);
        links[i].next.store(head, std::memory_order_relaxed);
        if (head != 0)
            links[head - 1].prev.store(i + 1, std::memory_order_relaxed);
        head = i + 1;
    }
    cell.head.store(head, std::memory_order_relaxed);
}

CarSnapshot readCarSlot(const CarSlot &slot, const RoadPlaceSlot &road, int id)
{
    CarSnapshot c;
    c.id = id;
    std::chrono::steady_clock::time_point giveUpAt;
    for (int tries = 0;; ++tries) {
        const uint32_t before = slot.seq.load(std::memory_order_acquire);
        c.position = {slot.lat.load(std::memory_order_relaxed), slot.lng.load(std::memory_order_relaxed)};
        c.heading = slot.heading.load(std::memory_order_relaxed);
        c.speedKmh = slot.speedKmh.load(std::memory_order_relaxed);
        c.odometerM = slot.odometerM.load(std::memory_order_relaxed);
        const uint32_t roadSegment = road.segment.load(std::memory_order_relaxed);
        c.road = {roadSegment != 0, roadSegment != 0 ? roadSegment - 1 : 0,
                  road.offsetM.load(std::memory_order_relaxed)};
        std::atomic_thread_fence(std::memory_order_acquire);
        if ((before & 1) == 0 && slot.seq.load(std::memory_order_relaxed) == before)
            break;
        if (tries < 1000) {
            cpuRelax();
            continue;
        }
        // A writer that died mid-update leaves seq odd forever: accept the values eventually. Only
        // after real time, not a spin count: on a loaded machine a live writer can be preempted
        // mid-update for milliseconds (torn reads in tst_fleet_store under make test-asan).
        const auto now = std::chrono::steady_clock::now();
        if (tries == 1000)
            giveUpAt = now + std::chrono::milliseconds(100);
        else if (now >= giveUpAt)
            break;
        std::this_thread::yield();
    }
    c.state = static_cast<CarState>(slot.state.load(std::memory_order_acquire));
    c.bookingId = bookingOf(slot);
    c.updatedMs = slot.updatedMs.load(std::memory_order_relaxed);
    return c;
}

} // namespace

SharedMemoryFleet::SharedMemoryFleet(SharedRegion &region)
    : FleetStore(region)
{
}

CarSlot *SharedMemoryFleet::carSlot(int id) const
{
    if (id < 1 || id > carCount())
        return nullptr;
    return reinterpret_cast<CarSlot *>(regionBase() + RegionOffsets::cars) + (id - 1);
}

PackedPosition *SharedMemoryFleet::packedPositions() const
{
    return reinterpret_cast<PackedPosition *>(regionBase() + RegionOffsets::positions);
}

GridCell *SharedMemoryFleet::gridCells() const
{
    return reinterpret_cast<GridCell *>(regionBase() + RegionOffsets::grid);
}

GridLink *SharedMemoryFleet::gridLinks() const
{
    return reinterpret_cast<GridLink *>(regionBase() + RegionOffsets::gridLinks);
}

RoadPlaceSlot *SharedMemoryFleet::roadPlaces() const
{
    return reinterpret_cast<RoadPlaceSlot *>(regionBase() + RegionOffsets::roadPlaces);
}

CarSnapshot SharedMemoryFleet::readCar(const CarSlot &slot, int id) const
{
    return readCarSlot(slot, roadPlaces()[id - 1], id);
}

void SharedMemoryFleet::placeInGrid(int index, LatLng position)
{
    const int to = gridCellOf(position);
    const int from = gridLinks()[index].cell.load(std::memory_order_relaxed) - 1;
    if (from == to)
        return;
    if (from >= 0)
        unlinkFromCell(from, index);
    if (to >= 0)
        linkIntoCell(to, index);
}

void SharedMemoryFleet::unlinkFromCell(int cellIndex, int index)
{
    GridCell &cell = gridCells()[cellIndex];
    GridLink *links = gridLinks();
    GridLink &link = links[index];
    CellUpdate update(cell);
    if (update.abandoned())
        rebuildCell(cell, links, cellIndex);
    if (link.cell.load(std::memory_order_relaxed) != cellIndex + 1)
        return; // the rebuild found it half unlinked by the writer that died: out already
    link.cell.store(0, std::memory_order_relaxed); // first: a rebuild leaves it out from here on
    const int32_t prev = link.prev.load(std::memory_order_relaxed);
    const int32_t next = link.next.load(std::memory_order_relaxed);
    if (prev != 0)
        links[prev - 1].next.store(next, std::memory_order_relaxed);
    else
        cell.head.store(next, std::memory_order_relaxed);
    if (next != 0)
        links[next - 1].prev.store(prev, std::memory_order_relaxed);
    link.prev.store(0, std::memory_order_relaxed);
    link.next.store(0, std::memory_order_relaxed);
}

void SharedMemoryFleet::linkIntoCell(int cellIndex, int index)
{
    GridCell &cell = gridCells()[cellIndex];
    GridLink *links = gridLinks();
    GridLink &link = links[index];
    CellUpdate update(cell);
    if (update.abandoned())
        rebuildCell(cell, links, cellIndex);
    const int32_t head = cell.head.load(std::memory_order_relaxed);
    link.prev.store(0, std::memory_order_relaxed);
    link.next.store(head, std::memory_order_relaxed);
    if (head != 0)
        links[head - 1].prev.store(index + 1, std::memory_order_relaxed);
    cell.head.store(index + 1, std::memory_order_relaxed);
    link.cell.store(cellIndex + 1, std::memory_order_relaxed); // last: named only once wholly in
}

template <typename Consider>
bool SharedMemoryFleet::visitGrid(const NearbyArea &area, int limit, int count,
                                  std::vector<NearbyCandidate> &candidates, Consider consider) const
{
    if (!std::isfinite(area.south) || !std::isfinite(area.north) || !std::isfinite(area.west)
        || !std::isfinite(area.east))
        return false;
    // The cells of the box, with a margin: the box is in floats, a car's cell goes by its double.
    const int64_t rowFrom = gridRow(double(area.south) - kGridMarginDeg);
    const int64_t rowTo = gridRow(double(area.north) + kGridMarginDeg);
    const int64_t columnFrom = gridColumn(double(area.west) - kGridMarginDeg);
    const int64_t columnTo = gridColumn(double(area.east) + kGridMarginDeg);
    const int64_t rows = rowTo - rowFrom + 1;
    const int64_t columns = columnTo - columnFrom + 1;
    // A box as wide as the wrapped grid would read cells twice; one of more cells than the fleet
    // has cars is cheaper to scan.
    if (rows >= kGridSide || columns >= kGridSide || rows * columns * kGridCellCostInCars > count)
        return false;
    const GridCell *cells = gridCells();
    const GridLink *links = gridLinks();
    const auto readCell = [&](int64_t row, int64_t column) {
        const GridCell &cell = cells[gridCellAt(row, column)];
        const std::size_t kept = candidates.size();
        for (int tries = 0; tries < kGridReadTries; ++tries) {
            const uint32_t before = cell.seq.load(std::memory_order_acquire);
            if (before & 1) {
                cpuRelax();
                continue;
            }
            // Bounded: a list read while it changes may be cut or looped; the check below throws
            // such a read away.
            int32_t at = cell.head.load(std::memory_order_relaxed);
            for (int steps = 0; at > 0 && at <= kMaxCars && steps < kMaxCars; ++steps) {
                if (at <= count) // cars past the count (a smaller fleet since) are not answered
                    consider(at - 1);
                at = links[at - 1].next.load(std::memory_order_relaxed);
            }
            std::atomic_thread_fence(std::memory_order_acquire);
            if (cell.seq.load(std::memory_order_relaxed) == before)
                return true;
            candidates.resize(kept); // the list changed while it was read: read it again
        }
        return false;
    };
    // Rings of cells around the centre's, clipped to the box. After each, no car outside the
    // rings read is nearer (planar, as approxM) than the nearest side with box beyond it, less a
    // margin for the float copy; once `limit` candidates and the keepBeyondM band past the
    // limit-th lie within that, the candidates hold every car nearby() can keep.
    const int64_t row0 = std::clamp(gridRow(area.centre.lat), rowFrom, rowTo);
    const int64_t column0 = std::clamp(gridColumn(area.centre.lng), columnFrom, columnTo);
    const double marginM = kGridMarginDeg * std::max(area.metresPerLatDeg, area.metresPerLngDeg);
    for (int64_t ring = 0;; ++ring) {
        const int64_t top = row0 - ring, bottom = row0 + ring, left = column0 - ring, right = column0 + ring;
        for (int64_t row = std::max(top, rowFrom); row <= std::min(bottom, rowTo); ++row) {
            if (row == top || row == bottom) {
                for (int64_t column = std::max(left, columnFrom); column <= std::min(right, columnTo); ++column)
                    if (!readCell(row, column))
                        return false;
            } else {
                if (left >= columnFrom && !readCell(row, left))
                    return false;
                if (right <= columnTo && !readCell(row, right))
                    return false;
            }
        }
        double side = INFINITY; // to the nearest side of the rings read that has box beyond it
        if (top > rowFrom)
            side = std::min(side, (area.centre.lat - double(top) / kGridCellsPerDegreeLat) * area.metresPerLatDeg);
        if (bottom < rowTo)
            side =
                std::min(side, (double(bottom + 1) / kGridCellsPerDegreeLat - area.centre.lat) * area.metresPerLatDeg);
        if (left > columnFrom)
            side = std::min(side, (area.centre.lng - double(left) / kGridCellsPerDegreeLng) * area.metresPerLngDeg);
        if (right < columnTo)
            side =
                std::min(side, (double(right + 1) / kGridCellsPerDegreeLng - area.centre.lng) * area.metresPerLngDeg);
        if (side == INFINITY)
            return true; // the whole box is read
        side -= marginM;
        if (side >= area.reachM)
            return true; // no car beyond could be in reach
        if (static_cast<int>(candidates.size()) >= limit) {
            const auto nth = candidates.begin() + (limit - 1);
            std::nth_element(candidates.begin(), nth, candidates.end(),
                             [](const NearbyCandidate &a, const NearbyCandidate &b) { return a.approxM < b.approxM; });
            if (nth->approxM + area.keepBeyondM < side)
                return true;
        }
    }
}

BookingSlot &SharedMemoryFleet::bookingSlot(uint64_t id) const
{
    return reinterpret_cast<BookingSlot *>(regionBase() + RegionOffsets::bookings)[id % kBookingCapacity];
}

int SharedMemoryFleet::carCount() const
{
    return control().carCount.load(std::memory_order_acquire);
}

void SharedMemoryFleet::initialiseCars(int count, const std::function<LatLng(int id)> &place)
{
    count = std::clamp(count, 0, kMaxCars);
    control().carCount.store(count, std::memory_order_release);
    for (int id = 1; id <= count; ++id) {
        CarSlot &slot = *carSlot(id);
        writePosition(slot, place(id), 0, 0, false);
        if (m_versionsAcrossCopies) // before serving: no reader yet
            slot.updatedMs.store(kPlaceholderVersion, std::memory_order_relaxed);
        slot.bookingId.store(0, std::memory_order_relaxed);
        slot.state.store(static_cast<uint32_t>(CarState::Available), std::memory_order_release);
    }
}

std::optional<CarSnapshot> SharedMemoryFleet::car(int id) const
{
    const CarSlot *slot = carSlot(id);
    if (!slot)
        return std::nullopt;
    return readCar(*slot, id);
}

void SharedMemoryFleet::locateOnRoads(std::shared_ptr<const city::City> roads)
{
    m_roads.store(std::move(roads), std::memory_order_release);
}

RoadPlace SharedMemoryFleet::locate(const CarSlot &slot, int id, LatLng position) const
{
    const std::shared_ptr<const city::City> roads = m_roads.load(std::memory_order_acquire);
    if (!roads)
        return {};
    // Read consistently with the position it belongs to, so it is that position's snap.
    const CarSnapshot stored = readCar(slot, id);
    if (stored.road.located && stored.position.lat == position.lat && stored.position.lng == position.lng)
        return stored.road;
    const city::RoadPoint snapped = roads->snap({position.lat, position.lng});
    if (!snapped.valid)
        return {};
    return {true, snapped.segment, snapped.offsetM};
}

uint64_t SharedMemoryFleet::placesKey() const
{
    const std::shared_ptr<const city::City> roads = m_roads.load(std::memory_order_acquire);
    return roads ? placesKeyOf(*roads) : 0;
}

std::optional<RoadPlace> SharedMemoryFleet::sendersPlace(const CarSnapshot &remote, uint64_t placesKey) const
{
    if (placesKey == 0 || !remote.road.located)
        return std::nullopt;
    const std::shared_ptr<const city::City> roads = m_roads.load(std::memory_order_acquire);
    if (!roads || placesKeyOf(*roads) != placesKey)
        return std::nullopt;
    // Same file and rules, yet the bytes came over the network: a place off this city's segments
    // would send every road ETA from it out of bounds. A snap's offset never passes the segment's
    // length (Snapper clamps it), so neither may a sent one.
    const auto &segments = roads->data().segments;
    if (remote.road.segment >= segments.size() || !(remote.road.offsetM >= 0)
        || remote.road.offsetM > double(segments[remote.road.segment].lengthM))
        return std::nullopt;
    return remote.road;
}

void SharedMemoryFleet::storePosition(CarSlot &slot, LatLng position, const RoadPlace &road)
{
    slot.lat.store(position.lat, std::memory_order_relaxed);
    slot.lng.store(position.lng, std::memory_order_relaxed);
    const auto index = int(&slot - reinterpret_cast<CarSlot *>(regionBase() + RegionOffsets::cars));
    RoadPlaceSlot &place = roadPlaces()[index];
    place.segment.store(road.located ? road.segment + 1 : 0, std::memory_order_relaxed);
    place.offsetM.store(road.offsetM, std::memory_order_relaxed);
    PackedPosition &packed = packedPositions()[index];
    packed.lat.store(float(position.lat), std::memory_order_relaxed);
    packed.lng.store(float(position.lng), std::memory_order_relaxed);
    placeInGrid(index, position);
}

void SharedMemoryFleet::writePosition(CarSlot &slot, LatLng position, float heading, float speedKmh, bool moved)
{
    const auto index = int(&slot - reinterpret_cast<CarSlot *>(regionBase() + RegionOffsets::cars));
    const RoadPlace road = locate(slot, index + 1, position); // before the seqlock: a snap takes a while
    const uint32_t seq = beginSeqlockWrite(slot.seq) - 1;     // the update ends at seq + 2 (even)
    std::atomic_thread_fence(std::memory_order_release);
    if (moved) {
        const LatLng previous{slot.lat.load(std::memory_order_relaxed), slot.lng.load(std::memory_order_relaxed)};
        const double step = city::haversineMeters(previous, position);
        slot.odometerM.store(slot.odometerM.load(std::memory_order_relaxed) + step, std::memory_order_relaxed);
    }
    slot.heading.store(heading, std::memory_order_relaxed);
    slot.speedKmh.store(speedKmh, std::memory_order_relaxed);
    // In a cluster's copy the stamp is also the car's version (versionPositionsAcrossCopies):
    // never below the one it replaces. Writers of one car are serialised by its seqlock.
    const int64_t now = clock::wallMs();
    slot.updatedMs.store(m_versionsAcrossCopies ? std::max(now, slot.updatedMs.load(std::memory_order_relaxed) + 1)
                                                : now,
                         std::memory_order_relaxed);
    storePosition(slot, position, road);
    slot.seq.store(seq + 2, std::memory_order_release);
}

std::optional<CarSnapshot> SharedMemoryFleet::updatePosition(int id, LatLng position, float heading, float speedKmh,
                                                             bool fromDevice)
{
    CarSlot *slot = carSlot(id);
    if (!slot)
        return std::nullopt;
    if (fromDevice)
        markDeviceDriven(id);
    writePosition(*slot, position, heading, speedKmh, true);
    const auto state = static_cast<CarState>(slot->state.load(std::memory_order_acquire));
    const uint64_t bookingId = bookingOf(*slot);
    if (state == CarState::ToPickup && bookingId != 0)
        markArrivedIfAtPickup(id, bookingId, position);
    return readCar(*slot, id);
}

void SharedMemoryFleet::markDeviceDriven(int id)
{
    if (CarSlot *slot = carSlot(id))
        slot->deviceUntilMs.store(clock::monotonicMs() + kDevicePauseMs, std::memory_order_relaxed);
}

bool SharedMemoryFleet::isDeviceDriven(int id) const
{
    const CarSlot *slot = carSlot(id);
    return slot && slot->deviceUntilMs.load(std::memory_order_relaxed) > clock::monotonicMs();
}

void SharedMemoryFleet::markArrivedIfAtPickup(int carId, uint64_t bookingId, LatLng position)
{
    BookingSlot &slot = bookingSlot(bookingId);
    SlotLock lock(slot.lock);
    // A booking getting another car (a reassign awaits the ledger) waits for that car instead.
    if (slot.id.load(std::memory_order_relaxed) != bookingId || slot.carId != carId
        || static_cast<BookingState>(slot.state) != BookingState::Assigned || slot.pendingMove == kPendingReassign)
        return;
    if (city::haversineMeters(position, {slot.pickupLat, slot.pickupLng}) > kArrivalRadiusM)
        return;
    slot.state = static_cast<uint32_t>(BookingState::Arriving);
    slot.arrivedMs = clock::wallMs();
    slot.etaS = 0;
    // The car now waits at the pickup for its rider (what it does, for the map and the API).
    if (CarSlot *car = carSlot(carId)) {
        uint32_t expected = static_cast<uint32_t>(CarState::ToPickup);
        car->state.compare_exchange_strong(expected, static_cast<uint32_t>(CarState::Waiting),
                                           std::memory_order_acq_rel);
    }
}

bool SharedMemoryFleet::undoArrival(uint64_t id, int carId)
{
    BookingSlot &slot = bookingSlot(id);
    SlotLock lock(slot.lock);
    // Only the arrival itself: a move begun since (the rider boarding, a cancel) decides on its own.
    if (slot.id.load(std::memory_order_relaxed) != id || slot.carId != carId
        || static_cast<BookingState>(slot.state) != BookingState::Arriving || slot.pendingMove != 0)
        return false;
    slot.state = static_cast<uint32_t>(BookingState::Assigned);
    slot.arrivedMs = 0;
    if (CarSlot *car = carSlot(carId)) {
        uint32_t expected = static_cast<uint32_t>(CarState::Waiting);
        car->state.compare_exchange_strong(expected, static_cast<uint32_t>(CarState::ToPickup),
                                           std::memory_order_acq_rel);
    }
    return true;
}

void SharedMemoryFleet::setEta(uint64_t id, uint32_t etaS)
{
    BookingSlot &slot = bookingSlot(id);
    SlotLock lock(slot.lock);
    if (slot.id.load(std::memory_order_relaxed) == id
        && static_cast<BookingState>(slot.state) == BookingState::Assigned)
        slot.etaS = etaS;
}

void SharedMemoryFleet::setDestination(uint64_t id, LatLng destination)
{
    BookingSlot &slot = bookingSlot(id);
    SlotLock lock(slot.lock);
    if (slot.id.load(std::memory_order_relaxed) != id || !isOpen(static_cast<BookingState>(slot.state)))
        return;
    slot.destinationLat = destination.lat;
    slot.destinationLng = destination.lng;
    slot.hasDestination = 1;
}

std::vector<NearbyCar> SharedMemoryFleet::nearby(LatLng centre, double radiusM, int limit, bool availableOnly) const
{
    std::vector<NearbyCar> found;
    if (limit <= 0)
        return found;
    // Two passes. First the packed float positions: a box test, then a planar distance (within a
    // metre of the great-circle one at city scale) ranks the cars. Only the few that can be among
    // the `limit` nearest have their slot read and their exact distance computed.
    constexpr double kMetresPerDegree = city::kMetersPerDegreeLat;
    constexpr double kApproxToleranceM = 2.0; // float rounding of the packed copy + planar error
    const double metresPerLngDeg = kMetresPerDegree * std::max(0.01, std::cos(centre.lat * std::numbers::pi / 180.0));
    const double reachM = radiusM + kApproxToleranceM;
    const float south = float(centre.lat - reachM / kMetresPerDegree);
    const float north = float(centre.lat + reachM / kMetresPerDegree);
    const float west = float(centre.lng - reachM / metresPerLngDeg);
    const float east = float(centre.lng + reachM / metresPerLngDeg);
    const int count = carCount();
    const auto *carSlots = reinterpret_cast<const CarSlot *>(regionBase() + RegionOffsets::cars);
    const PackedPosition *packed = packedPositions();

    using Candidate = NearbyCandidate;
    std::vector<Candidate> candidates;
    const auto consider = [&](int i) {
        const float lat = packed[i].lat.load(std::memory_order_relaxed);
        const float lng = packed[i].lng.load(std::memory_order_relaxed);
        // One well-predicted branch rather than four: most cars are outside the box.
        const bool inBox = (lat >= south) & (lat <= north) & (lng >= west) & (lng <= east);
        if (!inBox)
            return;
        const double dy = (double(lat) - centre.lat) * kMetresPerDegree;
        const double dx = (double(lng) - centre.lng) * metresPerLngDeg;
        const double approx = std::sqrt(dx * dx + dy * dy);
        if (approx > reachM)
            return;
        const auto state = static_cast<CarState>(carSlots[i].state.load(std::memory_order_relaxed));
        if (state == CarState::Offline || (availableOnly && state != CarState::Available))
            return;
        candidates.push_back({approx, i});
    };
    const auto scanFleet = [&] {
        candidates.clear();
        for (int i = 0; i < count; ++i)
            consider(i);
    };
    // Keep every car whose approximate distance is within the tolerance of the limit-th nearest:
    // the exact ranking below can only reorder those.
    constexpr double kKeepBeyondM = 2 * kApproxToleranceM;
    const auto keepNearest = [&] {
        if (static_cast<int>(candidates.size()) <= limit)
            return;
        const auto nth = candidates.begin() + (limit - 1);
        std::nth_element(candidates.begin(), nth, candidates.end(),
                         [](const Candidate &a, const Candidate &b) { return a.approxM < b.approxM; });
        const double cutoff = nth->approxM + kKeepBeyondM;
        candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                        [cutoff](const Candidate &c) { return c.approxM > cutoff; }),
                         candidates.end());
    };
    // The cars of the grid cells around the centre, or the whole fleet when the box is too large
    // for the grid to pay (or a cell could not be read): the same cars are kept either way.
    const NearbyArea area{centre, south, north, west, east, kMetresPerDegree, metresPerLngDeg, reachM, kKeepBeyondM};
    if (visitGrid(area, limit, count, candidates, consider)) {
        keepNearest();
        // A car that moved from a cell read to one read later is there twice, and the kept ones
        // are where a second copy matters (it would push another car out): then scan instead.
        std::sort(candidates.begin(), candidates.end(),
                  [](const Candidate &a, const Candidate &b) { return a.index < b.index; });
        const bool repeated =
            std::adjacent_find(candidates.begin(), candidates.end(),
                               [](const Candidate &a, const Candidate &b) { return a.index == b.index; })
            != candidates.end();
        if (repeated) {
            scanFleet();
            keepNearest();
        }
    } else {
        scanFleet();
        keepNearest();
    }
    found.reserve(candidates.size());
    for (const Candidate &c : candidates) {
        CarSnapshot car = readCar(carSlots[c.index], c.index + 1);
        const double d = city::haversineMeters(centre, car.position);
        if (d <= radiusM)
            found.push_back({car, d});
    }
    const auto byDistance = [](const NearbyCar &a, const NearbyCar &b) {
        return a.distanceM < b.distanceM || (a.distanceM == b.distanceM && a.car.id < b.car.id);
    };
    if (static_cast<int>(found.size()) > limit) {
        std::partial_sort(found.begin(), found.begin() + limit, found.end(), byDistance);
        found.resize(static_cast<std::size_t>(limit));
    } else {
        std::sort(found.begin(), found.end(), byDistance);
    }
    return found;
}

bool SharedMemoryFleet::claimCar(CarSlot &car, uint64_t claim)
{
    // The claim first, then the state: a process killed in between leaves a claim the primary can
    // trace to it. A free car's bookingId may still name its last booking (restored, then ended).
    if (static_cast<CarState>(car.state.load(std::memory_order_acquire)) != CarState::Available)
        return false;
    uint64_t word = car.bookingId.load(std::memory_order_acquire);
    if (isCarClaim(word) || !car.bookingId.compare_exchange_strong(word, claim, std::memory_order_acq_rel))
        return false; // another booking is taking it
    uint32_t expected = static_cast<uint32_t>(CarState::Available);
    if (car.state.compare_exchange_strong(expected, static_cast<uint32_t>(CarState::ToPickup),
                                          std::memory_order_acq_rel))
        return true;
    uint64_t mine = claim; // taken meanwhile (held for another node's booking)
    car.bookingId.compare_exchange_strong(mine, 0, std::memory_order_acq_rel);
    return false;
}

void SharedMemoryFleet::giveBackClaimedCar(CarSlot &car, uint64_t claim)
{
    // Untouched when another node's committed booking took the car meanwhile (applyRemoteBooking
    // replaced the claim): the database's word is final. The state first, then the claim: a hold
    // (holdCar) arriving in between keeps the car, as a hold of a free car does.
    if (car.bookingId.load(std::memory_order_acquire) != claim)
        return;
    uint32_t expected = static_cast<uint32_t>(CarState::ToPickup);
    car.state.compare_exchange_strong(expected, static_cast<uint32_t>(CarState::Available), std::memory_order_acq_rel);
    uint64_t mine = claim;
    car.bookingId.compare_exchange_strong(mine, 0, std::memory_order_acq_rel);
}

SharedMemoryFleet::ReservedCar SharedMemoryFleet::reserveBestCar(LatLng pickup, double radiusM, const EtaRanker &etas,
                                                                 uint64_t claim)
{
    for (int attempt = 0; attempt < kBookingAttempts; ++attempt) {
        const auto nearest = nearby(pickup, radiusM, kBookingCandidates, true);
        std::vector<LatLng> positions;
        for (const NearbyCar &n : nearest)
            positions.push_back(n.car.position);
        const std::vector<double> eta = etas(pickup, positions);
        std::vector<std::size_t> order;
        for (std::size_t i = 0; i < nearest.size(); ++i)
            if (i < eta.size() && std::isfinite(eta[i]))
                order.push_back(i);
        if (order.empty())
            return {};
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return eta[a] < eta[b]; });
        for (const std::size_t index : order) {
            if (claimCar(*carSlot(nearest[index].car.id), claim))
                return {nearest[index].car.id, eta[index]};
            // another booking won this car: try the next nearest
        }
    }
    return {};
}

FleetStore::Booking SharedMemoryFleet::book(const QString &riderId, LatLng pickup, std::optional<LatLng> dropoff,
                                            double radiusM, const EtaRanker &etas, const QByteArray &riderTokenHash)
{
    Booking result;
    const uint64_t claim = carClaim(::getpid());
    // A car another node's committed booking takes while this booking is being written sends this
    // one to the next car (the database gave it away; in one machine's fleet nothing else can).
    for (int attempt = 0; attempt < kBookingAttempts; ++attempt) {
        const ReservedCar reserved = reserveBestCar(pickup, radiusM, etas, claim);
        if (reserved.id == 0)
            return result; // NoCarAvailable
        CarSlot &car = *carSlot(reserved.id);
        // The car is ours. Find a booking slot that holds no open booking.
        bool carLost = false;
        for (int tries = 0; tries < kBookingCapacity && !carLost; ++tries) {
            const uint64_t id = nextBookingId();
            if (id == 0) {
                giveBackClaimedCar(car, claim);
                result.result = BookResult::IdsUnavailable;
                return result;
            }
            BookingSlot &slot = bookingSlot(id);
            SlotLock lock(slot.lock);
            if (slot.id.load(std::memory_order_relaxed) != 0 && isOpen(static_cast<BookingState>(slot.state)))
                continue;
            BookingSnapshot created;
            created.state = BookingState::Assigned;
            created.carId = reserved.id;
            created.riderId = riderId;
            created.riderTokenHash = riderTokenHash;
            created.pickup = pickup;
            created.hasDropoff = dropoff.has_value();
            created.dropoff = dropoff.value_or(LatLng{});
            created.etaS = uint32_t(std::lround(reserved.etaS));
            created.createdMs = clock::wallMs();
            created.createdMonoMs = clock::monotonicMs();
            writeBookingSlot(slot, created);
            clearPendingMove(slot);
            slot.createdPid = static_cast<int32_t>(::getpid());
            slot.id.store(id, std::memory_order_release);
            // The booking is written before the car names it: a process killed in between leaves
            // a booking the primary withdraws and a claim it hands to that booking first.
            uint64_t expected = claim;
            if (!car.bookingId.compare_exchange_strong(expected, id, std::memory_order_acq_rel)) {
                slot.id.store(0, std::memory_order_release); // never anyone's booking
                carLost = true;
                continue;
            }
            result.result = BookResult::Booked;
            result.booking = snapshotOf(slot);
            result.car = readCar(car, reserved.id);
            return result;
        }
        if (!carLost) {
            giveBackClaimedCar(car, claim);
            result.result = BookResult::CapacityFull;
            return result;
        }
    }
    return result; // NoCarAvailable: every car it took was given to other nodes' bookings meanwhile
}

uint64_t SharedMemoryFleet::nextBookingId()
{
    if (!m_idSource)
        return control().nextBookingId.fetch_add(1, std::memory_order_relaxed) + 1;
    const uint64_t id = m_idSource();
    raiseNewestBookingId(control(), id);
    return id;
}

std::optional<BookingSnapshot> SharedMemoryFleet::booking(uint64_t id) const
{
    if (id == 0)
        return std::nullopt;
    BookingSlot &slot = bookingSlot(id);
    SlotLock lock(slot.lock);
    if (slot.id.load(std::memory_order_relaxed) != id)
        return std::nullopt;
    return snapshotOf(slot);
}

bool SharedMemoryFleet::restoreBooking(const BookingSnapshot &b, const TripProgress &progress)
{
    CarSlot *car = carSlot(b.carId);
    if (!car || b.id == 0)
        return false;
    uint32_t expected = static_cast<uint32_t>(CarState::Available);
    const CarState carState = b.state == BookingState::OnTrip     ? CarState::OnTrip
                              : b.state == BookingState::Arriving ? CarState::Waiting
                                                                  : CarState::ToPickup;
    if (!car->state.compare_exchange_strong(expected, static_cast<uint32_t>(carState), std::memory_order_acq_rel))
        return false;
    // The car stands where it was: at the pickup when it had arrived, else at its checkpoint.
    if (b.state == BookingState::Arriving)
        writePosition(*car, b.pickup, 0, 0, false);
    else if (progress.valid)
        writePosition(*car, progress.carAt, 0, 0, false);
    const int64_t now = clock::wallMs();
    BookingSnapshot restored = b;
    restored.hasDestination = progress.valid && progress.hasDestination;
    restored.destination = progress.destination;
    restored.etaS = 0;
    restored.arrivedMs = b.state == BookingState::Arriving ? now : 0;
    restored.endedMs = 0;
    // The odometer restarts with the process: a trip is metered on from its checkpoint (its metres
    // so far below today's odometer, its time on board before now).
    const double odometer = car->odometerM.load(std::memory_order_relaxed);
    restored.startOdometerM = odometer;
    if (b.state == BookingState::OnTrip && progress.valid) {
        restored.startOdometerM = odometer - progress.tripDistanceM;
        restored.pickupMs = now - int64_t(std::llround(progress.tripElapsedS / simSpeed() * 1000.0));
    }
    // A waiting booking's age (its pickup timeout) from its checkpoint, like a trip's time on board:
    // a wall-clock step before the checkpoint does not count, as its wall-clock age would.
    if (progress.valid && progress.checkpointMs != 0)
        restored.createdMonoMs = clock::monotonicMs() - ageAtRestoreMs(progress, now, simSpeed());
    restored.distanceM = restored.fare = restored.durationS = 0;
    BookingSlot &slot = bookingSlot(b.id);
    SlotLock lock(slot.lock);
    writeBookingSlot(slot, restored);
    clearPendingMove(slot);
    slot.createdPid = 0; // the ledger's already
    slot.id.store(b.id, std::memory_order_release);
    car->bookingId.store(b.id, std::memory_order_release);
    return true;
}

std::vector<BookingSnapshot> SharedMemoryFleet::recentBookings(int max) const
{
    std::vector<BookingSnapshot> out;
    const uint64_t newest = control().nextBookingId.load(std::memory_order_acquire);
    for (uint64_t id = newest; id > 0 && static_cast<int>(out.size()) < max; --id) {
        if (newest - id >= static_cast<uint64_t>(kBookingCapacity))
            break;
        if (auto b = booking(id))
            out.push_back(*b);
    }
    return out;
}

void SharedMemoryFleet::releaseCar(int carId, uint64_t bookingId)
{
    CarSlot *car = carSlot(carId);
    if (!car)
        return;
    uint64_t expected = bookingId;
    if (car->bookingId.compare_exchange_strong(expected, 0, std::memory_order_acq_rel))
        car->state.store(static_cast<uint32_t>(CarState::Available), std::memory_order_release);
}

template <typename Fill>
FleetStore::Transition SharedMemoryFleet::beginTransition(uint64_t id, BookingState to, Fill fill)
{
    Transition t;
    if (id == 0)
        return t;
    BookingSlot &slot = bookingSlot(id);
    SlotLock lock(slot.lock);
    if (slot.id.load(std::memory_order_relaxed) != id)
        return t;
    t.booking = snapshotOf(slot);
    if (slot.pendingMove != 0) {
        t.result = TransitionResult::MoveInProgress;
        return t;
    }
    t.result = TransitionResult::IllegalState;
    if (canTransition(static_cast<BookingState>(slot.state), to)) {
        reservePendingMove(slot, static_cast<uint32_t>(to));
        fill(t.booking);
        t.booking.state = to;
        t.result = TransitionResult::Done;
    }
    return t;
}

FleetStore::Transition SharedMemoryFleet::beginPickup(uint64_t id)
{
    return beginTransition(id, BookingState::OnTrip, [this](BookingSnapshot &b) {
        const CarSlot *car = carSlot(b.carId);
        b.pickupMs = clock::wallMs();
        b.pickupMonoMs = clock::monotonicMs();
        b.startOdometerM = car ? car->odometerM.load(std::memory_order_relaxed) : 0;
    });
}

FleetStore::Transition SharedMemoryFleet::beginComplete(uint64_t id,
                                                        const std::function<double(double, double)> &fareFor)
{
    return beginTransition(id, BookingState::Completed, [this, &fareFor](BookingSnapshot &b) {
        const CarSlot *car = carSlot(b.carId);
        const double odometer = car ? car->odometerM.load(std::memory_order_relaxed) : b.startOdometerM;
        b.endedMs = clock::wallMs();
        b.distanceM = metresOnBoard(b, odometer);
        b.durationS = std::max(0.0, simulatedSecondsSince(b.pickupMonoMs, b.pickupMs)); // one time base: simulated
        b.fare = fareFor(b.distanceM, b.durationS);
    });
}

FleetStore::Transition SharedMemoryFleet::beginCancel(uint64_t id)
{
    return beginTransition(id, BookingState::Cancelled, [](BookingSnapshot &b) { b.endedMs = clock::wallMs(); });
}

FleetStore::Transition SharedMemoryFleet::settle(const Transition &move, bool committed)
{
    Transition t;
    const uint64_t id = move.booking.id;
    if (move.result != TransitionResult::Done || id == 0) {
        t = move;
        return t;
    }
    BookingSlot &slot = bookingSlot(id);
    SlotLock lock(slot.lock);
    const auto to = static_cast<uint32_t>(move.booking.state);
    if (slot.id.load(std::memory_order_relaxed) != id || slot.pendingMove != to)
        return t; // NotFound: the reservation is gone (cannot happen while begin/settle pair up)
    clearPendingMove(slot);
    t.result = TransitionResult::Done;
    if (committed) {
        slot.state = to;
        switch (move.booking.state) {
        case BookingState::OnTrip:
            slot.pickupMs = move.booking.pickupMs;
            slot.pickupMonoMs = move.booking.pickupMonoMs;
            slot.startOdometerM = move.booking.startOdometerM;
            if (CarSlot *car = carSlot(slot.carId))
                car->state.store(static_cast<uint32_t>(CarState::OnTrip), std::memory_order_release);
            break;
        case BookingState::Completed:
            slot.distanceM = move.booking.distanceM;
            slot.durationS = move.booking.durationS;
            slot.fare = move.booking.fare;
            [[fallthrough]];
        default: // Cancelled (and any move that ends the booking)
            slot.endedMs = move.booking.endedMs;
            releaseCar(slot.carId, id);
            break;
        }
    }
    t.booking = snapshotOf(slot);
    return t;
}

FleetStore::Transition SharedMemoryFleet::beginExpire(uint64_t id)
{
    return beginTransition(id, BookingState::Expired, [](BookingSnapshot &b) { b.endedMs = clock::wallMs(); });
}

FleetStore::Reassignment SharedMemoryFleet::beginReassign(uint64_t id, int carId, double radiusM, const EtaRanker &etas)
{
    Reassignment r;
    const std::optional<BookingSnapshot> before = booking(id);
    if (!before)
        return r;
    r.booking = *before;
    r.result = ReassignResult::IllegalState;
    if (before->state != BookingState::Assigned && before->state != BookingState::Arriving)
        return r;

    // Take the new car first (outside the booking's lock: ranking by road takes a while).
    const uint64_t claim = carClaim(::getpid());
    ReservedCar reserved;
    if (carId == 0) {
        reserved = reserveBestCar(before->pickup, radiusM, etas, claim);
    } else if (CarSlot *wanted = carSlot(carId)) {
        if (claimCar(*wanted, claim)) {
            const std::vector<double> eta = etas(before->pickup, {readCar(*wanted, carId).position});
            reserved = {carId, !eta.empty() && std::isfinite(eta.front()) ? eta.front() : 0.0};
        }
    }
    if (reserved.id == 0) {
        r.result = ReassignResult::CarUnavailable;
        return r;
    }
    CarSlot &car = *carSlot(reserved.id);

    BookingSlot &slot = bookingSlot(id);
    SlotLock lock(slot.lock);
    const auto state = static_cast<BookingState>(slot.state);
    // Picked up, cancelled or reassigned by someone else meanwhile, or a cancel awaits the ledger
    // (it decides first): give the new car back.
    if (slot.id.load(std::memory_order_relaxed) != id || slot.carId != before->carId || slot.pendingMove != 0
        || (state != BookingState::Assigned && state != BookingState::Arriving)) {
        giveBackClaimedCar(car, claim);
        const bool same = slot.id.load(std::memory_order_relaxed) == id;
        r.booking = same ? snapshotOf(slot) : *before;
        // Still open, and moving (or moved: another reassign gave it a car meanwhile): the ask
        // was right, its moment not; not the booking's state.
        if (same && (state == BookingState::Assigned || state == BookingState::Arriving))
            r.result = ReassignResult::MoveInProgress;
        return r;
    }
    // Reserved, not applied: the booking keeps its car until the ledger holds the move (a refused
    // commit must not leave the booking on a car the ledger never gave it). The new car is the
    // booking's already, so no other booking or cluster resync can take it meanwhile.
    // The move is reserved before the car names the booking: a process killed in between leaves a
    // pending reassign and a claim the primary hands to that booking first.
    reservePendingMove(slot, kPendingReassign, reserved.id);
    uint64_t expected = claim;
    if (!car.bookingId.compare_exchange_strong(expected, id, std::memory_order_acq_rel)) {
        clearPendingMove(slot); // another node's committed booking took the car meanwhile
        r.result = ReassignResult::CarUnavailable;
        r.booking = snapshotOf(slot);
        return r;
    }
    r.previousCarId = slot.carId;
    r.result = ReassignResult::Done;
    r.booking = snapshotOf(slot);
    r.booking.carId = reserved.id;
    r.booking.state = BookingState::Assigned;
    r.booking.etaS = uint32_t(std::lround(reserved.etaS));
    r.booking.arrivedMs = 0;
    r.car = readCar(car, reserved.id);
    return r;
}

FleetStore::Reassignment SharedMemoryFleet::settleReassign(const Reassignment &move, bool committed)
{
    Reassignment r;
    const uint64_t id = move.booking.id;
    if (move.result != ReassignResult::Done || id == 0)
        return move;
    BookingSlot &slot = bookingSlot(id);
    SlotLock lock(slot.lock);
    if (slot.id.load(std::memory_order_relaxed) != id || slot.pendingMove != kPendingReassign
        || slot.pendingCarId != move.car.id)
        return r; // NotFound: the reservation is gone (cannot happen while begin/settle pair up)
    clearPendingMove(slot);
    r.result = ReassignResult::Done;
    // A cluster node's copy may have heard the outcome first (a resync brought the ledger's row
    // with the new car, or another node ended the booking): never free the car the booking has
    // now, never reopen an ended booking.
    if (committed && isOpen(static_cast<BookingState>(slot.state))) {
        r.previousCarId = slot.carId;
        slot.carId = move.car.id;
        slot.state = static_cast<uint32_t>(BookingState::Assigned);
        slot.etaS = move.booking.etaS;
        slot.arrivedMs = 0;
        if (r.previousCarId != move.car.id)
            releaseCar(r.previousCarId, id);
    } else if (slot.carId != move.car.id) {
        releaseCar(move.car.id, id);
    }
    r.booking = snapshotOf(slot);
    if (const CarSlot *car = carSlot(slot.carId))
        r.car = readCar(*car, slot.carId);
    return r;
}

std::vector<uint64_t> SharedMemoryFleet::openBookingsMadeBy(int pid) const
{
    std::vector<uint64_t> out;
    for (int index = 0; index < kBookingCapacity; ++index) {
        BookingSlot &slot = bookingSlot(uint64_t(index));
        SlotLock lock(slot.lock);
        const uint64_t id = slot.id.load(std::memory_order_relaxed);
        if (id != 0 && slot.createdPid == pid && isOpen(static_cast<BookingState>(slot.state)))
            out.push_back(id);
    }
    return out;
}

std::vector<BookingSnapshot> SharedMemoryFleet::openBookings() const
{
    // Slot by slot, and a snapshot (it copies the rider id) only of an open one: a cluster node
    // resyncs every second while other nodes take its cars, and recentBookings() made a snapshot
    // of each of the ring's 32,768 slots, open or not (most of the resync's CPU). It also
    // reached only the ids below the newest, not an older booking still open.
    std::vector<BookingSnapshot> out;
    for (int index = 0; index < kBookingCapacity; ++index) {
        BookingSlot &slot = bookingSlot(uint64_t(index));
        SlotLock lock(slot.lock);
        if (slot.id.load(std::memory_order_relaxed) != 0 && isOpen(static_cast<BookingState>(slot.state)))
            out.push_back(snapshotOf(slot));
    }
    return out;
}

bool SharedMemoryFleet::holdsOpenBookingWithToken(const QByteArray &riderTokenHash) const
{
    if (riderTokenHash.size() != qsizetype(sizeof(BookingSlot::riderTokenHash)))
        return false;
    for (int index = 0; index < kBookingCapacity; ++index) {
        BookingSlot &slot = bookingSlot(uint64_t(index));
        SlotLock lock(slot.lock);
        if (slot.id.load(std::memory_order_relaxed) != 0 && isOpen(static_cast<BookingState>(slot.state))
            && std::memcmp(slot.riderTokenHash, riderTokenHash.constData(), sizeof slot.riderTokenHash) == 0)
            return true;
    }
    return false;
}

std::vector<FleetStore::PendingMove> SharedMemoryFleet::movesPendingFor(int pid) const
{
    std::vector<PendingMove> out;
    for (int index = 0; index < kBookingCapacity; ++index) {
        BookingSlot &slot = bookingSlot(uint64_t(index));
        SlotLock lock(slot.lock);
        const uint64_t id = slot.id.load(std::memory_order_relaxed);
        if (id == 0 || slot.pendingMove == 0 || slot.pendingPid != pid)
            continue;
        out.push_back({id, static_cast<BookingState>(slot.pendingMove), slot.pendingCarId});
    }
    return out;
}

int SharedMemoryFleet::settleCarClaimsOf(int pid)
{
    // The bookings and reassigns the dead process had written when it died take the car it had
    // claimed for them; their own cleanup then decides (withdrawn, let go or kept as the ledger
    // has them). A claim with neither was a booking not yet written: its car is free again.
    std::unordered_map<int, uint64_t> claimedFor;
    for (const uint64_t id : openBookingsMadeBy(pid))
        if (const auto made = booking(id))
            claimedFor.emplace(made->carId, id);
    for (const PendingMove &move : movesPendingFor(pid))
        if (move.to == BookingState::Assigned && move.newCarId != 0)
            claimedFor[move.newCarId] = move.bookingId;
    const uint64_t claim = carClaim(pid);
    int settled = 0;
    for (int id = 1; id <= carCount(); ++id) {
        CarSlot &car = *carSlot(id);
        if (car.bookingId.load(std::memory_order_acquire) != claim)
            continue;
        ++settled;
        if (const auto it = claimedFor.find(id); it != claimedFor.end()) {
            uint64_t expected = claim;
            car.bookingId.compare_exchange_strong(expected, it->second, std::memory_order_acq_rel);
        } else {
            giveBackClaimedCar(car, claim);
        }
    }
    return settled;
}

bool SharedMemoryFleet::settleAbandoned(int pid, const PendingMove &move,
                                        const std::optional<BookingSnapshot> &recorded)
{
    std::optional<BookingSnapshot> held;
    {
        BookingSlot &slot = bookingSlot(move.bookingId);
        SlotLock lock(slot.lock);
        if (slot.id.load(std::memory_order_relaxed) != move.bookingId || slot.pendingPid != pid
            || slot.pendingMove != static_cast<uint32_t>(move.to) || slot.pendingCarId != move.newCarId)
            return false; // settled meanwhile
        held = snapshotOf(slot);
    }
    const bool reassign = move.to == BookingState::Assigned;
    if (reassign) {
        const bool applied = recorded && isOpen(recorded->state) && recorded->carId == move.newCarId;
        Reassignment begun;
        begun.result = ReassignResult::Done;
        begun.booking = *held;
        begun.booking.etaS = 0; // the simulator gives the new car's ETA on its next tick
        if (const CarSlot *car = carSlot(move.newCarId))
            begun.car = readCar(*car, move.newCarId);
        return settleReassign(begun, applied).result == ReassignResult::Done && applied;
    }
    const bool applied = recorded && recorded->state == move.to;
    Transition begun;
    begun.result = TransitionResult::Done;
    begun.booking = *held;
    begun.booking.state = move.to;
    if (applied) {
        // The values the dead process committed are the ledger's; the car's odometer at the
        // pickup is read now (the car waited at the pickup meanwhile).
        const CarSlot *car = carSlot(held->carId);
        const int64_t wallNow = clock::wallMs();
        begun.booking.pickupMs = move.to == BookingState::OnTrip ? recorded->pickupMs : held->pickupMs;
        if (move.to == BookingState::OnTrip) {
            begun.booking.pickupMonoMs = clock::monotonicMs() - std::max<int64_t>(0, wallNow - recorded->pickupMs);
            begun.booking.startOdometerM = car ? car->odometerM.load(std::memory_order_relaxed) : 0;
        }
        begun.booking.endedMs = recorded->endedMs;
        begun.booking.distanceM = recorded->distanceM;
        begun.booking.durationS = recorded->durationS;
        begun.booking.fare = recorded->fare;
    }
    return settle(begun, applied).result == TransitionResult::Done && applied;
}

SharedMemoryFleet::RemotePosition SharedMemoryFleet::applyRemotePosition(const CarSnapshot &remote, uint64_t placesKey)
{
    CarSlot *slot = carSlot(remote.id);
    if (!slot || remote.updatedMs < slot->updatedMs.load(std::memory_order_relaxed))
        return RemotePosition::Stale;
    // The sender snapped it on the same city file already; else it is located here.
    const std::optional<RoadPlace> sent = sendersPlace(remote, placesKey);
    const RoadPlace road = sent ? *sent : locate(*slot, remote.id, remote.position);
    const uint32_t seq = beginSeqlockWrite(slot->seq) - 1;
    std::atomic_thread_fence(std::memory_order_release);
    // Checked again under the lock: a local write may have come in while the position was located.
    if (remote.updatedMs < slot->updatedMs.load(std::memory_order_relaxed)) {
        slot->seq.store(seq + 2, std::memory_order_release);
        return RemotePosition::Stale;
    }
    slot->heading.store(remote.heading, std::memory_order_relaxed);
    slot->speedKmh.store(remote.speedKmh, std::memory_order_relaxed);
    // This copy's own odometer takes the step, as a local write does; the sender's (remote.odometerM)
    // counts on another host since another start, and two senders' fork when both move the car.
    const LatLng previous{slot->lat.load(std::memory_order_relaxed), slot->lng.load(std::memory_order_relaxed)};
    const double odometer =
        slot->odometerM.load(std::memory_order_relaxed) + city::haversineMeters(previous, remote.position);
    slot->odometerM.store(odometer, std::memory_order_relaxed);
    slot->updatedMs.store(remote.updatedMs, std::memory_order_relaxed);
    storePosition(*slot, remote.position, road);
    slot->seq.store(seq + 2, std::memory_order_release);
    takeTripMetres(remote, odometer);
    return sent ? RemotePosition::PlaceAsSent : RemotePosition::Located;
}

void SharedMemoryFleet::takeTripMetres(const CarSnapshot &remote, double odometer)
{
    // The step just added may hold moves this copy never saw one by one (Redis was away: the
    // position jumped from where the car stood before), which the trip's metres so far, as this
    // copy had them from an announce or a resync, may count already. The node that made the move
    // metered every step of it: the trip goes on from its count here.
    if (remote.state != CarState::OnTrip || remote.bookingId == 0 || remote.tripM <= 0)
        return; // not on a trip, or a sender that did not meter it (0: it takes nothing away)
    BookingSlot &slot = bookingSlot(remote.bookingId);
    SlotLock lock(slot.lock);
    if (slot.id.load(std::memory_order_relaxed) == remote.bookingId
        && static_cast<BookingState>(slot.state) == BookingState::OnTrip && slot.carId == remote.id)
        slot.startOdometerM = odometer - remote.tripM;
}

bool SharedMemoryFleet::applyRemoteBooking(const BookingSnapshot &sent)
{
    CarSlot *car = carSlot(sent.carId);
    if (!car || sent.id == 0)
        return true; // names no car of this fleet: nothing to show
    raiseNewestBookingId(control(), sent.id);
    BookingSlot &slot = bookingSlot(sent.id);
    SlotLock lock(slot.lock);
    const BookingSnapshot b = meteredHere(sent, slot, *car);
    int previousCar = 0;
    if (slot.id.load(std::memory_order_relaxed) == b.id) {
        const auto held = static_cast<BookingState>(slot.state);
        if (lifeStage(b.state) < lifeStage(held))
            return true; // an older announcement overtaken by a newer one
        if (lifeStage(b.state) == lifeStage(held) && b.carId == slot.carId && !isOpen(held))
            return true; // ended already
        previousCar = slot.carId;
    } else if (slot.id.load(std::memory_order_relaxed) != 0 && isOpen(static_cast<BookingState>(slot.state))) {
        return false;
    }
    writeBookingSlot(slot, b);
    slot.createdPid = 0; // committed, by another node
    if (previousCar == 0)
        clearPendingMove(slot);
    slot.id.store(b.id, std::memory_order_release);
    if (isOpen(b.state)) {
        // The database gave the car to this booking: whatever this copy thought (free, held for an
        // unknown booking, reserved by a local booking that will lose its claim) it is this one's.
        car->bookingId.store(b.id, std::memory_order_release);
        car->state.store(static_cast<uint32_t>(carStateFor(b.state)), std::memory_order_release);
        if (previousCar != 0 && previousCar != b.carId)
            releaseCar(previousCar, b.id);
    } else {
        releaseCar(b.carId, b.id);
        if (previousCar != 0 && previousCar != b.carId)
            releaseCar(previousCar, b.id);
    }
    return true;
}

// Under the booking slot's lock.
BookingSnapshot SharedMemoryFleet::meteredHere(const BookingSnapshot &sent, const BookingSlot &slot, const CarSlot &car)
{
    BookingSnapshot b = sent;
    if (b.state != BookingState::OnTrip)
        return b; // a trip's start matters only while it runs; a completed one brings its distance
    const bool meteringAlready = slot.id.load(std::memory_order_relaxed) == b.id
                                 && static_cast<BookingState>(slot.state) == BookingState::OnTrip
                                 && slot.carId == b.carId;
    // A trip this copy meters already keeps its start (a resync's checkpoint is older than what it
    // measured since); a new one is metered on from the metres its sender counted so far.
    b.startOdometerM = meteringAlready ? slot.startOdometerM
                                       : car.odometerM.load(std::memory_order_relaxed) - std::max(0.0, sent.distanceM);
    b.distanceM = 0;
    return b;
}

void SharedMemoryFleet::holdCar(int carId)
{
    if (CarSlot *car = carSlot(carId)) {
        uint32_t expected = static_cast<uint32_t>(CarState::Available);
        car->state.compare_exchange_strong(expected, static_cast<uint32_t>(CarState::ToPickup),
                                           std::memory_order_acq_rel);
    }
}

int SharedMemoryFleet::releaseHeldCars()
{
    int released = 0;
    for (int id = 1; id <= carCount(); ++id)
        released += releaseIfHeld(*carSlot(id));
    return released;
}

void SharedMemoryFleet::releaseHeldCar(int carId)
{
    if (CarSlot *car = carSlot(carId))
        releaseIfHeld(*car);
}

bool SharedMemoryFleet::releaseIfHeld(CarSlot &car)
{
    uint32_t expected = static_cast<uint32_t>(CarState::ToPickup);
    return car.bookingId.load(std::memory_order_acquire) == 0
           && car.state.compare_exchange_strong(expected, static_cast<uint32_t>(CarState::Available),
                                                std::memory_order_acq_rel);
}

} // namespace taxicore
