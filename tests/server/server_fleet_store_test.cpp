// FleetStore in-process over a real SharedRegion: nearby ordering and limits, the booking CAS
// under threads, the booking state machine (table and store), and the position seqlock.

#include "fleet/BookingState.h"
#include "fleet/SharedMemoryFleet.h"
#include "region/SharedRegion.h"
#include "city/Geo.h"

#include "Wait.h"

#include <QTest>
#include <atomic>
#include <cmath>
#include <latch>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

using namespace taxicore;
using taxicore::test::waitUntil;

namespace {

constexpr LatLng kCentre{57.7000, 11.9700};
constexpr double kMetreLat = 1.0 / 111'195.0;
// Position writes and reads that overlap in the seqlock test, each at least, within the timeout.
constexpr long kContention = 100'000;
constexpr int kContentionTimeoutMs = 10'000;

// Car `id` stands `id * 10` metres north of the centre.
LatLng placeNorth(int id)
{
    return {kCentre.lat + id * 10 * kMetreLat, kCentre.lng};
}

double distanceM(LatLng a, LatLng b)
{
    constexpr double r = 6371008.8, rad = 3.141592653589793 / 180.0;
    const double dLat = (b.lat - a.lat) * rad, dLng = (b.lng - a.lng) * rad;
    const double h = std::sin(dLat / 2) * std::sin(dLat / 2)
                     + std::cos(a.lat * rad) * std::cos(b.lat * rad) * std::sin(dLng / 2) * std::sin(dLng / 2);
    return 2 * r * std::asin(std::min(1.0, std::sqrt(h)));
}

// An ETA function for book(): seconds at 10 m/s, so the nearest car is also the fastest.
// Callable as both FleetStore ETA signatures (per car, or ranking a list of cars).
struct EtaBySpeed {
    uint32_t operator()(LatLng) const { return 60; }
    std::vector<double> operator()(LatLng pickup, const std::vector<LatLng> &cars) const
    {
        std::vector<double> out;
        for (const LatLng &car : cars)
            out.push_back(distanceM(pickup, car) / 10.0);
        return out;
    }
};

const char *stateName(BookingState s)
{
    static thread_local QByteArray name;
    name = QByteArray(bookingStateName(s).data(), bookingStateName(s).size());
    return name.constData();
}

} // namespace

class FleetStoreTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void openChoosesTheBackendByUrl();
    void nearbyIsSortedByDistanceAndLimited();
    void nearbyHonoursRadiusAndAvailability();
    void nearbyMatchesABruteForceSearch();
    void concurrentBookingNeverGivesOneCarToTwoBookings();
    void canTransitionAllowsExactlyTheDesignedMoves();
    void storeTransitionsFollowTheStateMachine();
    void completedBookingFreesItsCar();
    void cancelledBookingFreesItsCar();
    void openBookingsAreEveryOpenOneWhateverItsId();
    void seqlockReadersNeverSeeATornPosition();

private:
    std::unique_ptr<SharedRegion> m_region;
    std::unique_ptr<FleetStore> m_fleet;
};

void FleetStoreTest::init()
{
    QString error;
    m_region = SharedRegion::create(error);
    QVERIFY2(m_region, qPrintable(error));
    m_fleet = std::make_unique<SharedMemoryFleet>(*m_region);
    m_fleet->control().startedMs.store(clock::wallMs());
}

// The seam (fleet/FleetStore.h): no URL or "shm:" is the embedded shared-memory fleet over the
// region it was given; anything else is refused by name, not silently replaced by the default.
void FleetStoreTest::openChoosesTheBackendByUrl()
{
    QString error;
    for (const QString &url : {QString(), QStringLiteral("shm:")}) {
        const std::unique_ptr<FleetStore> fleet = FleetStore::open(*m_region, url, &error);
        QVERIFY2(fleet, qPrintable(error));
        QVERIFY(dynamic_cast<SharedMemoryFleet *>(fleet.get()));
        // The same region: a car placed through one store is seen through the other.
        m_fleet->initialiseCars(1, [](int) { return LatLng{57.7, 11.97}; });
        QCOMPARE(fleet->carCount(), 1);
    }
    QVERIFY(!FleetStore::open(*m_region, QStringLiteral("redis://127.0.0.1:1"), &error));
    QVERIFY2(error.contains(QStringLiteral("unknown fleet backend \"redis://127.0.0.1:1\"")), qPrintable(error));
}

void FleetStoreTest::cleanup()
{
    m_fleet.reset();
    m_region.reset();
}

void FleetStoreTest::nearbyIsSortedByDistanceAndLimited()
{
    // Place cars in a scrambled order of distance: car i at ((i * 37) % 100 + 1) * 10 m.
    m_fleet->initialiseCars(100, [](int id) { return placeNorth((id * 37) % 100 + 1); });
    QCOMPARE(m_fleet->carCount(), 100);
    const auto nearest = m_fleet->nearby(kCentre, 100'000, 10);
    QCOMPARE(nearest.size(), std::size_t(10));
    for (std::size_t i = 0; i < nearest.size(); ++i) {
        const double expected = double(i + 1) * 10;
        QVERIFY2(
            std::abs(nearest[i].distanceM - expected) < 0.5,
            qPrintable(QStringLiteral("#%1 at %2 m, expected %3 m").arg(i).arg(nearest[i].distanceM).arg(expected)));
        QCOMPARE((nearest[i].car.id * 37) % 100 + 1, int(i + 1));
        if (i > 0)
            QVERIFY(nearest[i].distanceM >= nearest[i - 1].distanceM);
    }
    const auto all = m_fleet->nearby(kCentre, 100'000, 1000);
    QCOMPARE(all.size(), std::size_t(100));
    for (std::size_t i = 1; i < all.size(); ++i)
        QVERIFY(all[i].distanceM >= all[i - 1].distanceM);
    QCOMPARE(m_fleet->nearby(kCentre, 100'000, 1).size(), std::size_t(1));
    QCOMPARE(m_fleet->nearby(kCentre, 100'000, 0).size(), std::size_t(0));
}

void FleetStoreTest::nearbyHonoursRadiusAndAvailability()
{
    m_fleet->initialiseCars(100, placeNorth);
    // Cars at 10, 20, ... 1000 m: radius 205 m holds exactly the first 20.
    const auto within = m_fleet->nearby(kCentre, 205, 1000);
    QCOMPARE(within.size(), std::size_t(20));
    for (const NearbyCar &n : within)
        QVERIFY(n.distanceM <= 205 && n.car.id <= 20);
    // A booked car drops out of availableOnly searches but not out of plain ones.
    const auto booked = m_fleet->book(QStringLiteral("r"), kCentre, std::nullopt, 1000, EtaBySpeed{});
    QVERIFY(booked.result == FleetStore::BookResult::Booked);
    QCOMPARE(booked.car.id, 1);
    QCOMPARE(m_fleet->nearby(kCentre, 205, 1000, true).size(), std::size_t(19));
    QCOMPARE(m_fleet->nearby(kCentre, 205, 1000, false).size(), std::size_t(20));
    QCOMPARE(m_fleet->nearby(kCentre, 205, 1000, true).front().car.id, 2);
}

// nearby() pre-selects on a packed float copy with a planar distance; the answer must still be
// exactly the `limit` nearest by great-circle distance, ties broken by id, on a dense random fleet.
void FleetStoreTest::nearbyMatchesABruteForceSearch()
{
    std::mt19937_64 random(7);
    std::uniform_real_distribution<double> lat(57.69, 57.72), lng(11.94, 11.99);
    m_fleet->initialiseCars(5000, [&](int) { return LatLng{lat(random), lng(random)}; });
    for (int booking = 0; booking < 500; ++booking) // some cars busy
        m_fleet->book(QStringLiteral("r"), {lat(random), lng(random)}, std::nullopt, 5000, EtaBySpeed{});
    for (int query = 0; query < 200; ++query) {
        const LatLng centre{lat(random), lng(random)};
        const double radiusM = query % 2 ? 300 : 1500;
        const int limit = query % 3 ? 20 : 5;
        const bool availableOnly = query % 4 == 0;
        std::vector<std::pair<double, int>> expected;
        for (int id = 1; id <= 5000; ++id) {
            const auto car = m_fleet->car(id);
            if (availableOnly && car->state != CarState::Available)
                continue;
            const double d = city::haversineMeters(centre, car->position);
            if (d <= radiusM)
                expected.push_back({d, id});
        }
        std::sort(expected.begin(), expected.end());
        expected.resize(std::min(expected.size(), std::size_t(limit)));
        const auto got = m_fleet->nearby(centre, radiusM, limit, availableOnly);
        QCOMPARE(got.size(), expected.size());
        for (std::size_t i = 0; i < got.size(); ++i)
            QCOMPARE(got[i].car.id, expected[i].second);
    }
}

void FleetStoreTest::concurrentBookingNeverGivesOneCarToTwoBookings()
{
    constexpr int kCars = 100, kThreads = 8, kAttemptsPerThread = 30;
    m_fleet->initialiseCars(kCars, [](int id) { return placeNorth(id % 17); }); // many cars at equal distances
    std::latch start(kThreads);
    std::mutex mutex;
    std::vector<FleetStore::Booking> won;
    std::atomic<int> refused{0}, other{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            start.arrive_and_wait();
            for (int i = 0; i < kAttemptsPerThread; ++i) {
                const auto b =
                    m_fleet->book(QStringLiteral("t%1-%2").arg(t).arg(i), kCentre, std::nullopt, 50'000, EtaBySpeed{});
                if (b.result == FleetStore::BookResult::Booked) {
                    std::lock_guard lock(mutex);
                    won.push_back(b);
                } else if (b.result == FleetStore::BookResult::NoCarAvailable) {
                    ++refused;
                } else {
                    ++other;
                }
            }
        });
    }
    for (std::thread &t : threads)
        t.join();
    QCOMPARE(int(won.size()), kCars);
    QCOMPARE(refused.load(), kThreads * kAttemptsPerThread - kCars);
    QCOMPARE(other.load(), 0);
    std::set<int> cars;
    std::set<uint64_t> ids;
    for (const auto &b : won) {
        cars.insert(b.booking.carId);
        ids.insert(b.booking.id);
        QCOMPARE(b.car.id, b.booking.carId);
        QCOMPARE(b.booking.state, BookingState::Assigned);
        // The car points back at exactly this booking.
        const auto car = m_fleet->car(b.booking.carId);
        QVERIFY(car);
        QCOMPARE(car->state, CarState::ToPickup);
        QCOMPARE(car->bookingId, b.booking.id);
        const auto stored = m_fleet->booking(b.booking.id);
        QVERIFY(stored);
        QCOMPARE(stored->carId, b.booking.carId);
    }
    QCOMPARE(int(cars.size()), kCars);
    QCOMPARE(int(ids.size()), kCars);
    QVERIFY(m_fleet->nearby(kCentre, 50'000, 1000, true).empty());
}

void FleetStoreTest::canTransitionAllowsExactlyTheDesignedMoves()
{
    using S = BookingState;
    const S all[] = {S::Requested, S::Assigned, S::Arriving, S::OnTrip, S::Completed, S::Cancelled};
    // The state machine: requested → assigned → arriving → on_trip → completed; cancelled from
    // requested/assigned/arriving. Nothing else.
    const std::set<std::pair<S, S>> legal{
        {S::Requested, S::Assigned}, {S::Assigned, S::Arriving},   {S::Arriving, S::OnTrip},
        {S::OnTrip, S::Completed},   {S::Requested, S::Cancelled}, {S::Assigned, S::Cancelled},
        {S::Arriving, S::Cancelled},
    };
    for (S from : all) {
        for (S to : all) {
            const bool expected = legal.count({from, to}) != 0;
            QVERIFY2(canTransition(from, to) == expected,
                     qPrintable(QStringLiteral("%1 → %2 should be %3")
                                    .arg(QLatin1StringView(stateName(from)), QLatin1StringView(stateName(to)),
                                         expected ? QStringLiteral("legal") : QStringLiteral("illegal"))));
        }
    }
    QVERIFY(isOpen(S::Assigned) && isOpen(S::Arriving) && isOpen(S::OnTrip));
    QVERIFY(!isOpen(S::Completed) && !isOpen(S::Cancelled));
}

void FleetStoreTest::storeTransitionsFollowTheStateMachine()
{
    using R = FleetStore::TransitionResult;
    m_fleet->initialiseCars(5, placeNorth);
    const LatLng pickup{kCentre.lat - 500 * kMetreLat, kCentre.lng};
    const auto b = m_fleet->book(QStringLiteral("rider"), pickup, std::nullopt, 50'000, EtaBySpeed{});
    QVERIFY(b.result == FleetStore::BookResult::Booked);
    const uint64_t id = b.booking.id;
    QCOMPARE(b.car.id, 1); // the nearest

    // Unknown ids.
    QVERIFY(m_fleet->pickup(0).result == R::NotFound);
    QVERIFY(m_fleet->cancel(id + 1000).result == R::NotFound);
    QVERIFY(!m_fleet->booking(id + 1000));

    // assigned: no pickup, no complete.
    auto t = m_fleet->pickup(id);
    QVERIFY(t.result == R::IllegalState);
    QCOMPARE(t.booking.state, BookingState::Assigned);
    QVERIFY(m_fleet->complete(id, [](double, double) { return 1.0; }).result == R::IllegalState);

    // A position far from the pickup does not arrive; one within metres does.
    m_fleet->updatePosition(1, {pickup.lat + 300 * kMetreLat, pickup.lng}, 0, 30, true);
    QCOMPARE(m_fleet->booking(id)->state, BookingState::Assigned);
    m_fleet->updatePosition(1, {pickup.lat + 5 * kMetreLat, pickup.lng}, 0, 0, true);
    QCOMPARE(m_fleet->booking(id)->state, BookingState::Arriving);

    t = m_fleet->pickup(id);
    QVERIFY(t.result == R::Done);
    QCOMPARE(t.booking.state, BookingState::OnTrip);
    QCOMPARE(m_fleet->car(1)->state, CarState::OnTrip);
    QVERIFY(m_fleet->cancel(id).result == R::IllegalState); // no cancelling a trip under way
    QVERIFY(m_fleet->pickup(id).result == R::IllegalState);

    // Drive 2 km in two legs; complete gets the odometer distance.
    m_fleet->updatePosition(1, {pickup.lat + 1005 * kMetreLat, pickup.lng}, 0, 40, true);
    m_fleet->updatePosition(1, {pickup.lat + 2005 * kMetreLat, pickup.lng}, 0, 40, true);
    double seenDistance = -1;
    t = m_fleet->complete(id, [&](double distance, double) {
        seenDistance = distance;
        return 123.0;
    });
    QVERIFY(t.result == R::Done);
    QCOMPARE(t.booking.state, BookingState::Completed);
    QVERIFY2(std::abs(seenDistance - 2000) < 2, qPrintable(QString::number(seenDistance)));
    QVERIFY(std::abs(t.booking.distanceM - 2000) < 2);
    QCOMPARE(t.booking.fare, 123.0);
    for (auto move : {&FleetStore::pickup, &FleetStore::cancel}) {
        const auto late = (m_fleet.get()->*move)(id);
        QVERIFY(late.result == R::IllegalState);
        QCOMPARE(late.booking.state, BookingState::Completed);
    }
    QVERIFY(m_fleet->complete(id, [](double, double) { return 1.0; }).result == R::IllegalState);
}

void FleetStoreTest::completedBookingFreesItsCar()
{
    m_fleet->initialiseCars(1, placeNorth);
    const auto b = m_fleet->book(QStringLiteral("a"), kCentre, std::nullopt, 50'000, EtaBySpeed{});
    QVERIFY(b.result == FleetStore::BookResult::Booked);
    // The only car is taken.
    QVERIFY(m_fleet->book(QStringLiteral("b"), kCentre, std::nullopt, 50'000, EtaBySpeed{}).result
            == FleetStore::BookResult::NoCarAvailable);
    m_fleet->updatePosition(1, kCentre, 0, 0, true);
    QVERIFY(m_fleet->pickup(b.booking.id).result == FleetStore::TransitionResult::Done);
    QVERIFY(m_fleet->complete(b.booking.id, [](double, double) { return 95.0; }).result
            == FleetStore::TransitionResult::Done);
    const auto car = m_fleet->car(1);
    QCOMPARE(car->state, CarState::Available);
    QCOMPARE(car->bookingId, uint64_t(0));
    const auto again = m_fleet->book(QStringLiteral("b"), kCentre, std::nullopt, 50'000, EtaBySpeed{});
    QVERIFY(again.result == FleetStore::BookResult::Booked);
    QCOMPARE(again.car.id, 1);
    QVERIFY(again.booking.id != b.booking.id);
    // The old booking is still readable, completed.
    QCOMPARE(m_fleet->booking(b.booking.id)->state, BookingState::Completed);
}

void FleetStoreTest::cancelledBookingFreesItsCar()
{
    m_fleet->initialiseCars(1, placeNorth);
    const auto b = m_fleet->book(QStringLiteral("a"), kCentre, std::nullopt, 50'000, EtaBySpeed{});
    QVERIFY(b.result == FleetStore::BookResult::Booked);
    QVERIFY(m_fleet->cancel(b.booking.id).result == FleetStore::TransitionResult::Done);
    QCOMPARE(m_fleet->car(1)->state, CarState::Available);
    QCOMPARE(m_fleet->booking(b.booking.id)->state, BookingState::Cancelled);
    QVERIFY(m_fleet->book(QStringLiteral("b"), kCentre, std::nullopt, 50'000, EtaBySpeed{}).result
            == FleetStore::BookResult::Booked);
    // Cancelling the old booking again must not free the car the new booking holds.
    QVERIFY(m_fleet->cancel(b.booking.id).result == FleetStore::TransitionResult::IllegalState);
    QCOMPARE(m_fleet->car(1)->state, CarState::ToPickup);
}

// A cluster node's resync compares these with the ledger's open bookings. An open booking far
// below the newest id (a long ride while other nodes booked 40,000 rides) is one of them; an
// ended one is not. (Walking down from the newest id, as recentBookings does, missed the first.)
void FleetStoreTest::openBookingsAreEveryOpenOneWhateverItsId()
{
    auto *fleet = dynamic_cast<SharedMemoryFleet *>(m_fleet.get());
    QVERIFY(fleet);
    fleet->initialiseCars(3, placeNorth);
    const auto old = fleet->book(QStringLiteral("long-ride"), kCentre, std::nullopt, 50'000, EtaBySpeed{});
    QVERIFY(old.result == FleetStore::BookResult::Booked);
    uint64_t next = old.booking.id + 40'000;
    fleet->setIdSource([&next] { return next++; });
    const auto ended = fleet->book(QStringLiteral("ended"), kCentre, std::nullopt, 50'000, EtaBySpeed{});
    QVERIFY(ended.result == FleetStore::BookResult::Booked);
    QVERIFY(fleet->cancel(ended.booking.id).result == FleetStore::TransitionResult::Done);
    const auto recent = fleet->book(QStringLiteral("recent"), kCentre, std::nullopt, 50'000, EtaBySpeed{});
    QVERIFY(recent.result == FleetStore::BookResult::Booked);

    std::vector<uint64_t> open;
    for (const BookingSnapshot &b : fleet->openBookings())
        open.push_back(b.id);
    std::sort(open.begin(), open.end());
    QCOMPARE(open, (std::vector<uint64_t>{old.booking.id, recent.booking.id}));
    fleet->setIdSource({});
}

void FleetStoreTest::seqlockReadersNeverSeeATornPosition()
{
    m_fleet->initialiseCars(1, [](int) { return LatLng{57.70, 11.90}; });
    const LatLng a{57.70, 11.90}, b{57.75, 12.05};
    std::atomic<bool> stop{false};
    std::atomic<long> writes{0}, reads{0}, torn{0};
    std::atomic<double> tornLat{0}, tornLng{0};
    const auto check = [&](LatLng p) {
        const bool isA = p.lat == a.lat && p.lng == a.lng;
        const bool isB = p.lat == b.lat && p.lng == b.lng;
        if (!isA && !isB) {
            ++torn;
            tornLat = p.lat;
            tornLng = p.lng;
        }
        ++reads;
    };
    std::thread writer([&] {
        bool toB = true;
        while (!stop.load(std::memory_order_relaxed)) {
            m_fleet->updatePosition(1, toB ? b : a, toB ? 90.f : 270.f, 50.f, false);
            toB = !toB;
            writes.fetch_add(1, std::memory_order_relaxed);
        }
    });
    std::thread byCar([&] {
        while (!stop.load(std::memory_order_relaxed)) {
            if (const auto car = m_fleet->car(1))
                check(car->position);
        }
    });
    std::thread byNearby([&] {
        while (!stop.load(std::memory_order_relaxed)) {
            for (const NearbyCar &n : m_fleet->nearby({57.725, 11.975}, 20'000, 5))
                check(n.car.position);
        }
    });
    // Until both sides did enough, not a fixed time: a loaded machine gets the same contention.
    waitUntil([&] { return writes.load() >= kContention && reads.load() >= kContention; }, kContentionTimeoutMs, 10);
    stop = true;
    writer.join();
    byCar.join();
    byNearby.join();
    QVERIFY2(
        writes.load() >= kContention && reads.load() >= kContention,
        qPrintable(QStringLiteral("too little contention: %1 writes, %2 reads").arg(writes.load()).arg(reads.load())));
    QVERIFY2(torn.load() == 0, qPrintable(QStringLiteral("%1 torn reads of %2, e.g. (%3, %4)")
                                              .arg(torn.load())
                                              .arg(reads.load())
                                              .arg(tornLat.load(), 0, 'f', 6)
                                              .arg(tornLng.load(), 0, 'f', 6)));
}

QTEST_GUILESS_MAIN(FleetStoreTest)
#include "server_fleet_store_test.moc"
