// Nearby's road ETAs start from where the fleet located each car when it moved (CarSnapshot::road)
// instead of snapping each candidate again (docs/benchmarks.md §13). That is only allowed if the
// answer does not change: every stored place is the city's snap of the position stored with it,
// whichever path wrote the position (simulator, device report, a cluster node's delta, a restore),
// and the ETAs from stored places equal those from fresh snaps. A place left stale by a move would
// change an ETA, and the comparison catches it (checked by planting a wrong place).

#include "city/City.h"
#include "dispatch/FleetSimulator.h"
#include "fleet/SharedMemoryFleet.h"
#include "pricing/RoadTripEstimator.h"
#include "region/SharedRegion.h"

#include <QTest>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <vector>

using namespace taxicore;

namespace {

constexpr int kCars = 500;
constexpr double kStepS = 1.0;
constexpr int kSteps = 60;
constexpr int kCentres = 200;
constexpr int kLimit = 20;

std::vector<LatLng> positionsOf(const std::vector<NearbyCar> &found)
{
    std::vector<LatLng> positions;
    for (const NearbyCar &n : found)
        positions.push_back(n.car.position);
    return positions;
}

} // namespace

class NearbyRoadPlaceTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();
    void everyStoredPlaceIsTheSnapOfItsPosition();
    void nearbyEtasFromStoredPlacesEqualFreshSnaps();
    void positionsFromEveryPathAreLocated();
    void withoutRoadsPositionsStayUnlocatedAndEtasAreSnapped();
    void anotherNodesPlaceOnTheSameCityIsStoredAsSent();
    void aWrongStoredPlaceChangesTheEtas();

private:
    // Fails unless car `id`'s stored place is the snap of its stored position.
    void verifyLocated(int id) const;
    std::vector<LatLng> randomCentres(int count, quint64 seed) const;

    std::shared_ptr<const city::City> m_city;
    std::unique_ptr<SharedRegion> m_region;
    std::unique_ptr<SharedMemoryFleet> m_fleet;
    std::unique_ptr<FleetSimulator> m_simulator;
};

void NearbyRoadPlaceTest::initTestCase()
{
    const auto loaded = city::City::load(QStringLiteral(TAXICORE_SOURCE_DIR "/resources/cities/gothenburg.taxicity"));
    QVERIFY2(loaded.city, qPrintable(loaded.error));
    m_city = loaded.city;
}

void NearbyRoadPlaceTest::init()
{
    QString error;
    m_region = SharedRegion::create(error);
    QVERIFY2(m_region, qPrintable(error));
    m_fleet = std::make_unique<SharedMemoryFleet>(*m_region);
    m_fleet->control().startedMs.store(clock::wallMs());
    m_fleet->control().simSpeed.store(1);
    // As the server starts: the simulator (which has the fleet locate positions on its city's
    // roads) before the cars are placed.
    m_simulator = std::make_unique<FleetSimulator>(*m_fleet, m_city, 18, 1.0);
    m_fleet->initialiseCars(kCars, [this](int) { return m_simulator->randomPoint(); });
}

void NearbyRoadPlaceTest::cleanup()
{
    m_simulator.reset();
    m_fleet.reset();
    m_region.reset();
}

void NearbyRoadPlaceTest::verifyLocated(int id) const
{
    const auto car = m_fleet->car(id);
    QVERIFY(car);
    QVERIFY2(car->road.located, qPrintable(QStringLiteral("car %1 is not located").arg(id)));
    const city::RoadPoint snapped = m_city->snap({car->position.lat, car->position.lng});
    QVERIFY(snapped.valid);
    if (car->road.segment != snapped.segment || car->road.offsetM != snapped.offsetM)
        QFAIL(qPrintable(QStringLiteral("car %1 at %2,%3: stored segment %4 offset %5, snap segment %6 offset %7")
                             .arg(id)
                             .arg(car->position.lat, 0, 'f', 7)
                             .arg(car->position.lng, 0, 'f', 7)
                             .arg(car->road.segment)
                             .arg(car->road.offsetM, 0, 'g', 17)
                             .arg(snapped.segment)
                             .arg(snapped.offsetM, 0, 'g', 17)));
}

std::vector<LatLng> NearbyRoadPlaceTest::randomCentres(int count, quint64 seed) const
{
    std::mt19937_64 random(seed);
    std::vector<LatLng> centres;
    for (int i = 0; i < count; ++i)
        centres.push_back(FleetSimulator::randomPointIn(m_city.get(), random));
    return centres;
}

void NearbyRoadPlaceTest::everyStoredPlaceIsTheSnapOfItsPosition()
{
    for (int id = 1; id <= kCars; ++id)
        verifyLocated(id); // as placed
    for (int step = 0; step < kSteps; ++step) {
        m_simulator->step(kStepS);
        if (step % 10 != 9)
            continue;
        for (int id = 1; id <= kCars; ++id) {
            verifyLocated(id);
            if (QTest::currentTestFailed())
                return;
        }
    }
}

void NearbyRoadPlaceTest::nearbyEtasFromStoredPlacesEqualFreshSnaps()
{
    const RoadTripEstimator estimator(*m_city);
    int compared = 0, reachable = 0;
    for (int step = 0; step < kSteps; ++step)
        m_simulator->step(kStepS);
    for (const LatLng &centre : randomCentres(kCentres, 2026)) {
        for (const double radiusM : {1000.0, 3000.0}) {
            const std::vector<NearbyCar> found = m_fleet->nearby(centre, radiusM, kLimit);
            for (const NearbyCar &n : found)
                QVERIFY(n.car.road.located);
            const std::vector<double> stored = estimator.carEtasTo(centre, found);
            const std::vector<double> fresh = estimator.etasTo(centre, positionsOf(found));
            QCOMPARE(stored.size(), fresh.size());
            for (std::size_t i = 0; i < stored.size(); ++i) {
                // Exactly equal: the same search from the same segment and offset.
                if (!(stored[i] == fresh[i] || (std::isnan(stored[i]) && std::isnan(fresh[i]))))
                    QFAIL(qPrintable(QStringLiteral("car %1: ETA %2 from its stored place, %3 from a fresh snap")
                                         .arg(found[i].car.id)
                                         .arg(stored[i], 0, 'g', 17)
                                         .arg(fresh[i], 0, 'g', 17)));
                reachable += std::isfinite(stored[i]);
            }
            compared += int(stored.size());
        }
    }
    QVERIFY2(compared > kCentres * kLimit / 2, qPrintable(QString::number(compared)));
    QVERIFY2(reachable > compared / 2, qPrintable(QStringLiteral("%1 of %2").arg(reachable).arg(compared)));
}

void NearbyRoadPlaceTest::positionsFromEveryPathAreLocated()
{
    const std::vector<LatLng> elsewhere = randomCentres(4, 7);
    // A device's report.
    m_fleet->updatePosition(1, elsewhere[0], 90, 30, true);
    verifyLocated(1);
    // Standing still at a new heading keeps the place (and it is still the snap).
    m_fleet->updatePosition(1, elsewhere[0], 180, 0, true);
    verifyLocated(1);
    // A cluster node's copy: a move another node made arrives as a delta.
    CarSnapshot remote = *m_fleet->car(2);
    remote.position = elsewhere[1];
    remote.updatedMs = clock::wallMs() + 1000;
    m_fleet->applyRemotePosition(remote);
    QCOMPARE(m_fleet->car(2)->position.lat, elsewhere[1].lat);
    verifyLocated(2);
    // A booking restored with its ride's checkpoint puts the car where the checkpoint had it.
    BookingSnapshot booking;
    booking.id = 41;
    booking.state = BookingState::OnTrip;
    booking.carId = 3;
    booking.riderId = QStringLiteral("rider");
    booking.pickup = elsewhere[2];
    booking.createdMs = clock::wallMs();
    TripProgress progress;
    progress.valid = true;
    progress.carAt = elsewhere[3];
    QVERIFY(m_fleet->restoreBooking(booking, progress));
    QCOMPARE(m_fleet->car(3)->position.lng, elsewhere[3].lng);
    verifyLocated(3);
    // A position off every road (in the sea, far away) is located on the nearest road all the same.
    m_fleet->updatePosition(4, {57.5, 11.5}, 0, 0, true);
    verifyLocated(4);
}

void NearbyRoadPlaceTest::withoutRoadsPositionsStayUnlocatedAndEtasAreSnapped()
{
    m_fleet->locateOnRoads(nullptr); // a fleet never given the city (a process without one)
    const std::vector<LatLng> elsewhere = randomCentres(2, 11);
    m_fleet->updatePosition(5, elsewhere[0], 0, 20, true);
    QVERIFY(!m_fleet->car(5)->road.located); // moved: the old place is not kept
    QVERIFY(m_fleet->car(6)->road.located);  // untouched: still the snap of its position
    verifyLocated(6);

    const RoadTripEstimator estimator(*m_city);
    const std::vector<NearbyCar> found = m_fleet->nearby(elsewhere[0], 3000, kLimit);
    QVERIFY(!found.empty());
    QCOMPARE(found.front().car.id, 5);
    QCOMPARE(estimator.carEtasTo(elsewhere[0], found), estimator.etasTo(elsewhere[0], positionsOf(found)));
}

void NearbyRoadPlaceTest::anotherNodesPlaceOnTheSameCityIsStoredAsSent()
{
    // Node A (this fixture's fleet) moves car 8; node B, on the same city file, is sent the move
    // with A's place and A's places key (cluster/FleetDelta): B stores the place as sent.
    const uint64_t checksum = m_fleet->placesKey();
    QVERIFY(checksum != 0);
    QString error;
    const std::unique_ptr<SharedRegion> regionB = SharedRegion::create(error);
    QVERIFY2(regionB, qPrintable(error));
    SharedMemoryFleet b(*regionB);
    b.initialiseCars(kCars, [](int) { return LatLng{57.70, 11.97}; });
    b.locateOnRoads(m_city);
    using Applied = SharedMemoryFleet::RemotePosition;

    const std::vector<LatLng> elsewhere = randomCentres(6, 17);
    m_fleet->updatePosition(8, elsewhere[0], 90, 30, true);
    CarSnapshot moved = *m_fleet->car(8);
    QVERIFY(moved.road.located);
    moved.updatedMs = clock::wallMs() + 1000;
    QCOMPARE(b.applyRemotePosition(moved, checksum), Applied::PlaceAsSent);
    QCOMPARE(b.car(8)->road.segment, moved.road.segment);
    QCOMPARE(b.car(8)->road.offsetM, moved.road.offsetM);

    // Taken as sent, not snapped: a place that is not the snap of the position is kept (a sender
    // on the same file never sends one; this shows B did not compute its own).
    const auto segments = uint32_t(m_city->data().segments.size());
    const city::RoadPoint snapped = m_city->snap({elsewhere[1].lat, elsewhere[1].lng});
    CarSnapshot planted = moved;
    planted.position = elsewhere[1];
    planted.road = {true, (snapped.segment + 1) % segments, 0.0};
    planted.updatedMs = moved.updatedMs + 1;
    QCOMPARE(b.applyRemotePosition(planted, checksum), Applied::PlaceAsSent);
    QCOMPARE(b.car(8)->road.segment, planted.road.segment);

    // Located here instead: another city file or snapping rules (another key), no key, no place,
    // or a place off this city's segments (a segment it does not have, an offset past the
    // segment's end, however little, or one that is no distance).
    int64_t version = planted.updatedMs;
    const auto expectSnapped = [&](const CarSnapshot &remote, uint64_t sum, int at) {
        CarSnapshot sent = remote;
        sent.position = elsewhere[std::size_t(at)];
        sent.updatedMs = ++version;
        const city::RoadPoint own = m_city->snap({sent.position.lat, sent.position.lng});
        const bool sentIsOwn = sent.road.located && sent.road.segment == own.segment;
        QVERIFY(!sentIsOwn); // else a kept place could not be told from a snap
        QCOMPARE(b.applyRemotePosition(sent, sum), Applied::Located);
        QCOMPARE(b.car(8)->road.segment, own.segment);
        QCOMPARE(b.car(8)->road.offsetM, own.offsetM);
    };
    CarSnapshot offCity = planted;
    expectSnapped(offCity, checksum + 1, 2);
    if (QTest::currentTestFailed())
        return;
    expectSnapped(offCity, 0, 3);
    CarSnapshot unlocated = planted;
    unlocated.road = {};
    expectSnapped(unlocated, checksum, 4);
    CarSnapshot pastTheEnd = planted;
    pastTheEnd.road = {true, 0, double(m_city->data().segments[0].lengthM) + 0.01};
    expectSnapped(pastTheEnd, checksum, 5);
    for (const double offset : {-0.01, std::numeric_limits<double>::quiet_NaN()}) {
        CarSnapshot noDistance = planted;
        noDistance.road = {true, 0, offset};
        expectSnapped(noDistance, checksum, 0);
    }
    CarSnapshot noSuchSegment = planted;
    noSuchSegment.road = {true, segments, 0.0};
    expectSnapped(noSuchSegment, checksum, 1);

    // An older move than the one held is still dropped.
    CarSnapshot stale = moved;
    QCOMPARE(b.applyRemotePosition(stale, checksum), Applied::Stale);
}

void NearbyRoadPlaceTest::aWrongStoredPlaceChangesTheEtas()
{
    // The comparison above would see a stale place: plant one (car 7 keeps its position, its place
    // is moved to another segment) and the ETA from it differs from the fresh snap's.
    const LatLng centre = randomCentres(1, 3).front();
    const auto car = m_fleet->car(7);
    NearbyCar n{*car, 0};
    const RoadTripEstimator estimator(*m_city);
    const double fresh = estimator.etasTo(centre, {car->position}).front();
    QCOMPARE(estimator.carEtasTo(centre, {n}).front(), fresh);
    const auto segments = uint32_t(m_city->data().segments.size());
    bool differs = false;
    for (uint32_t shift = 1; shift < 50 && !differs; ++shift) {
        n.car.road.segment = (car->road.segment + shift * 997) % segments;
        differs = estimator.carEtasTo(centre, {n}).front() != fresh;
    }
    QVERIFY(differs);
    // A place naming no segment of this city (another city file) is not trusted: snapped afresh.
    n.car.road.segment = segments;
    QCOMPARE(estimator.carEtasTo(centre, {n}).front(), fresh);
}

QTEST_GUILESS_MAIN(NearbyRoadPlaceTest)
#include "server_nearby_road_place_test.moc"
