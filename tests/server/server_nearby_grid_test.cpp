// The nearby grid (fleet/SharedMemoryFleet: cars listed by the cell of their position in the
// shared region) answers exactly what a search of the whole fleet answers: random fleets and
// queries over many seeds, cars on cell sides, radii spanning one cell to the whole city, cars
// moving across cells (by the simulator's path and by a cluster's remote updates), cars removed
// and added, booked cars left out of availableOnly searches; readers racing writers; a writer
// that died inside a cell's update; and, over HTTP in processes mode, a car moved through one
// worker is found through the others.

#include "fleet/SharedMemoryFleet.h"
#include "region/SharedRegion.h"
#include "city/Geo.h"

#include "HttpClient.h"
#include "ServerProcess.h"
#include "ServingKit.h"
#include "Wait.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QTest>
#include <atomic>
#include <cmath>
#include <memory>
#include <random>
#include <set>
#include <thread>
#include <vector>

using namespace taxicore;
using namespace taxicore::test;

namespace {

constexpr LatLng kCentre{57.7000, 11.9700};
// The grid's cell sides in degrees (kGridCellsPerDegreeLat/Lng in SharedMemoryFleet.cpp): cars are
// put exactly on them.
constexpr double kCellLatDeg = 1.0 / 800;
constexpr double kCellLngDeg = 1.0 / 500;
constexpr int kSeeds = 30;
constexpr int kQueriesPerRound = 60;
constexpr double kMetresPerDegLat = city::kMetersPerDegreeLat;

// ETAs for book(): metres at 10 m/s, so the nearest car is the fastest.
std::vector<double> etaBySpeed(LatLng pickup, const std::vector<LatLng> &cars)
{
    std::vector<double> out;
    for (const LatLng &car : cars)
        out.push_back(city::haversineMeters(pickup, car) / 10.0);
    return out;
}

// What a scan of the whole fleet answers (SharedMemoryFleet::nearby before the grid): every car
// pre-selected on its packed float position (a box, then a planar distance within 2 m of the
// reach), the limit-th nearest of those plus a 4 m band ranked by great-circle distance, ties by
// id. (Not simply every car within the radius by great-circle distance: beyond a few kilometres
// the planar pre-selection is off by more than its tolerance, and the scan was the reference.)
std::vector<int> bruteForce(const FleetStore &fleet, LatLng centre, double radiusM, int limit, bool availableOnly)
{
    constexpr double kMpd = city::kMetersPerDegreeLat, kTolerance = 2.0;
    const double mpdLng = kMpd * std::max(0.01, std::cos(centre.lat * M_PI / 180.0));
    const double reach = radiusM + kTolerance;
    const float south = float(centre.lat - reach / kMpd), north = float(centre.lat + reach / kMpd);
    const float west = float(centre.lng - reach / mpdLng), east = float(centre.lng + reach / mpdLng);
    std::vector<std::pair<double, int>> approx;
    for (int id = 1; id <= fleet.carCount(); ++id) {
        const auto car = fleet.car(id);
        if (car->state == CarState::Offline || (availableOnly && car->state != CarState::Available))
            continue;
        const float lat = float(car->position.lat), lng = float(car->position.lng);
        if (!(lat >= south && lat <= north && lng >= west && lng <= east))
            continue;
        const double dy = (double(lat) - centre.lat) * kMpd, dx = (double(lng) - centre.lng) * mpdLng;
        const double d = std::sqrt(dx * dx + dy * dy);
        if (d <= reach)
            approx.push_back({d, id});
    }
    if (limit > 0 && approx.size() > std::size_t(limit)) {
        std::vector<std::pair<double, int>> sorted = approx;
        std::nth_element(sorted.begin(), sorted.begin() + (limit - 1), sorted.end());
        const double cutoff = sorted[std::size_t(limit - 1)].first + 2 * kTolerance;
        approx.erase(std::remove_if(approx.begin(), approx.end(), [&](const auto &a) { return a.first > cutoff; }),
                     approx.end());
    }
    std::vector<std::pair<double, int>> within;
    for (const auto &a : approx) {
        const double d = city::haversineMeters(centre, fleet.car(a.second)->position);
        if (d <= radiusM)
            within.push_back({d, a.second});
    }
    std::sort(within.begin(), within.end());
    within.resize(std::min(within.size(), std::size_t(std::max(0, limit))));
    std::vector<int> ids;
    for (const auto &w : within)
        ids.push_back(w.second);
    return ids;
}

std::vector<int> idsOf(const std::vector<NearbyCar> &found)
{
    std::vector<int> ids;
    for (const NearbyCar &n : found)
        ids.push_back(n.car.id);
    return ids;
}

QString describe(const std::vector<int> &ids)
{
    QStringList out;
    for (const int id : ids)
        out << QString::number(id);
    return out.join(QLatin1Char(' '));
}

// A random point around the centre: mostly anywhere within ~15 km, some exactly on a cell side or
// corner, some a few metres from one.
LatLng randomPoint(std::mt19937_64 &random)
{
    std::uniform_real_distribution<double> lat(57.58, 57.82), lng(11.75, 12.20), unit(0, 1);
    LatLng p{lat(random), lng(random)};
    const double kind = unit(random);
    if (kind < 0.15) {
        p.lat = std::round(p.lat / kCellLatDeg) * kCellLatDeg;
    } else if (kind < 0.30) {
        p.lng = std::round(p.lng / kCellLngDeg) * kCellLngDeg;
    } else if (kind < 0.40) {
        p = {std::round(p.lat / kCellLatDeg) * kCellLatDeg, std::round(p.lng / kCellLngDeg) * kCellLngDeg};
    } else if (kind < 0.50) {
        p.lat = std::round(p.lat / kCellLatDeg) * kCellLatDeg + (unit(random) - 0.5) * 4 / kMetresPerDegLat;
    }
    return p;
}

CarSlot &carSlotOf(SharedRegion &region, int id)
{
    return reinterpret_cast<CarSlot *>(region.base() + RegionOffsets::cars)[id - 1];
}

} // namespace

class NearbyGridTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void gridAnswersWhatAFleetScanAnswers();
    void carsMovingAcrossCellsAreFoundWhereTheyAre();
    void carsRemovedAndAddedAreAnsweredByTheCount();
    void readersRacingWritersNeverMissAStillCarNorRepeatOne();
    void aCellWhoseWriterDiedIsRebuilt();
    void carMovedThroughOneWorkerIsFoundThroughTheOthers();

private:
    // Queries around random points with radii from 1 m to 50 km (one cell to more cells than the
    // fleet has cars, where the fleet is scanned), every limit and availability.
    void compareRandomQueries(std::mt19937_64 &random, int queries);

    std::unique_ptr<SharedRegion> m_region;
    std::unique_ptr<SharedMemoryFleet> m_fleet;
};

void NearbyGridTest::init()
{
    QString error;
    m_region = SharedRegion::create(error);
    QVERIFY2(m_region, qPrintable(error));
    m_fleet = std::make_unique<SharedMemoryFleet>(*m_region);
}

void NearbyGridTest::cleanup()
{
    m_fleet.reset();
    m_region.reset();
}

void NearbyGridTest::compareRandomQueries(std::mt19937_64 &random, int queries)
{
    std::uniform_real_distribution<double> logRadius(0, std::log10(50'000.0)), unit(0, 1);
    const int limits[] = {1, 5, 20, 100, 1000};
    for (int q = 0; q < queries; ++q) {
        const LatLng centre = randomPoint(random);
        const double radiusM = std::pow(10.0, logRadius(random));
        const int limit = limits[random() % std::size(limits)];
        const bool availableOnly = unit(random) < 0.4;
        const std::vector<int> expected = bruteForce(*m_fleet, centre, radiusM, limit, availableOnly);
        const std::vector<int> got = idsOf(m_fleet->nearby(centre, radiusM, limit, availableOnly));
        if (got != expected) {
            std::size_t first = 0;
            while (first < got.size() && first < expected.size() && got[first] == expected[first])
                ++first;
            const auto at = [&](const std::vector<int> &ids) {
                if (first >= ids.size())
                    return QStringLiteral("(none)");
                const CarSnapshot car = *m_fleet->car(ids[first]);
                return QStringLiteral("car %1 at %2 m (%3)")
                    .arg(ids[first])
                    .arg(city::haversineMeters(centre, car.position), 0, 'f', 4)
                    .arg(carStateName(car.state));
            };
            QFAIL(qPrintable(QStringLiteral("around %1,%2 within %3 m, limit %4%5: answer %6 of %7 differs at #%8: "
                                            "expected %9, got %10")
                                 .arg(centre.lat, 0, 'f', 9)
                                 .arg(centre.lng, 0, 'f', 9)
                                 .arg(radiusM)
                                 .arg(limit)
                                 .arg(availableOnly ? QStringLiteral(", available only") : QString())
                                 .arg(got.size())
                                 .arg(expected.size())
                                 .arg(first)
                                 .arg(at(expected), at(got))));
        }
        if (got != expected)
            QFAIL(qPrintable(QStringLiteral("around %1,%2 within %3 m, limit %4%5:\nexpected %6\ngot      %7")
                                 .arg(centre.lat, 0, 'f', 9)
                                 .arg(centre.lng, 0, 'f', 9)
                                 .arg(radiusM)
                                 .arg(limit)
                                 .arg(availableOnly ? QStringLiteral(", available only") : QString())
                                 .arg(describe(expected), describe(got))));
    }
}

void NearbyGridTest::gridAnswersWhatAFleetScanAnswers()
{
    for (int seed = 1; seed <= kSeeds; ++seed) {
        init();
        std::mt19937_64 random{uint64_t(seed)};
        std::uniform_int_distribution<int> size(200, 4000);
        const int cars = size(random);
        // Some cars share a position exactly (ties broken by id).
        std::vector<LatLng> spots;
        m_fleet->initialiseCars(cars, [&](int) {
            if (!spots.empty() && random() % 10 == 0)
                return spots[random() % spots.size()];
            spots.push_back(randomPoint(random));
            return spots.back();
        });
        // Booked cars (the booking CAS) and offline ones.
        for (int i = 0; i < cars / 10; ++i)
            m_fleet->book(QStringLiteral("r"), randomPoint(random), std::nullopt, 2000, etaBySpeed);
        for (int i = 0; i < cars / 20; ++i)
            carSlotOf(*m_region, 1 + int(random() % uint64_t(cars))).state.store(uint32_t(CarState::Offline));
        compareRandomQueries(random, kQueriesPerRound);
        if (QTest::currentTestFailed())
            QFAIL(qPrintable(QStringLiteral("seed %1, %2 cars").arg(seed).arg(cars)));
        cleanup();
    }
}

void NearbyGridTest::carsMovingAcrossCellsAreFoundWhereTheyAre()
{
    std::mt19937_64 random(99);
    constexpr int kCars = 3000;
    m_fleet->initialiseCars(kCars, [&](int) { return randomPoint(random); });
    std::uniform_real_distribution<double> step(-800, 800), unit(0, 1);
    for (int round = 0; round < 25; ++round) {
        for (int move = 0; move < kCars / 3; ++move) {
            const int id = 1 + int(random() % kCars);
            const CarSnapshot car = *m_fleet->car(id);
            LatLng to{car.position.lat + step(random) / kMetresPerDegLat,
                      car.position.lng + step(random) / (kMetresPerDegLat * 0.53)};
            const double kind = unit(random);
            if (kind < 0.2)
                to = randomPoint(random); // a jump across the city (or onto a cell side)
            else if (kind < 0.25)
                to.lat += kGridSide * kCellLatDeg; // one whole wrap of the grid north: the same cell's list
            if (unit(random) < 0.5) {
                m_fleet->updatePosition(id, to, 0, 30, false);
            } else {
                // A cluster node's copy takes the other nodes' moves this way (cluster/ClusterFleet).
                CarSnapshot remote = car;
                remote.position = to;
                remote.updatedMs = car.updatedMs + 1;
                m_fleet->applyRemotePosition(remote);
            }
        }
        compareRandomQueries(random, kQueriesPerRound / 2);
        if (QTest::currentTestFailed())
            QFAIL(qPrintable(QStringLiteral("round %1").arg(round)));
    }
}

void NearbyGridTest::carsRemovedAndAddedAreAnsweredByTheCount()
{
    std::mt19937_64 random(5);
    m_fleet->initialiseCars(3000, [&](int) { return randomPoint(random); });
    compareRandomQueries(random, kQueriesPerRound);
    // A smaller fleet: cars past the count stay listed in their cells but are never answered.
    m_fleet->initialiseCars(1200, [&](int) { return randomPoint(random); });
    QCOMPARE(m_fleet->carCount(), 1200);
    compareRandomQueries(random, kQueriesPerRound);
    // Larger again: every car is placed anew, the old listings moved with them.
    m_fleet->initialiseCars(3500, [&](int) { return randomPoint(random); });
    compareRandomQueries(random, kQueriesPerRound);
    // Cars going offline and coming back, a car with no position at all.
    for (int id = 1; id <= 3500; id += 3)
        carSlotOf(*m_region, id).state.store(uint32_t(CarState::Offline));
    m_fleet->updatePosition(2, {std::nan(""), 11.9}, 0, 0, false);
    compareRandomQueries(random, kQueriesPerRound);
    for (int id = 1; id <= 3500; id += 6)
        carSlotOf(*m_region, id).state.store(uint32_t(CarState::Available));
    m_fleet->updatePosition(2, kCentre, 0, 0, false);
    compareRandomQueries(random, kQueriesPerRound);
    QCOMPARE(idsOf(m_fleet->nearby(kCentre, 0.5, 1000)), bruteForce(*m_fleet, kCentre, 0.5, 1000, false));
}

void NearbyGridTest::readersRacingWritersNeverMissAStillCarNorRepeatOne()
{
    // Cars 1..500 stand still on a 1 km ring of cells around the centre; cars 501..2000 keep
    // crossing cells among them. Every answer holds every still car in reach, and no car twice.
    constexpr int kStill = 500, kCars = 2000;
    std::mt19937_64 placing(3);
    std::uniform_real_distribution<double> near(-0.008, 0.008);
    m_fleet->initialiseCars(kCars, [&](int) {
        return LatLng{kCentre.lat + near(placing), kCentre.lng + near(placing)};
    });
    std::atomic<bool> stop{false};
    std::atomic<long> moves{0};
    std::thread writer([&] {
        std::mt19937_64 random(4);
        std::uniform_real_distribution<double> jump(-0.008, 0.008);
        while (!stop.load()) {
            const int id = kStill + 1 + int(random() % (kCars - kStill));
            m_fleet->updatePosition(id, {kCentre.lat + jump(random), kCentre.lng + jump(random)}, 0, 30, false);
            moves.fetch_add(1);
        }
    });
    std::vector<std::pair<int, double>> still; // id, distance from the centre
    for (int id = 1; id <= kStill; ++id)
        still.push_back({id, city::haversineMeters(kCentre, m_fleet->car(id)->position)});
    QString failure;
    for (int query = 0; query < 3000 && failure.isEmpty(); ++query) {
        const double radiusM = 200 + query % 700;
        const auto found = m_fleet->nearby(kCentre, radiusM, kCars); // no limit: every still car in reach
        std::set<int> ids;
        for (const NearbyCar &n : found)
            if (!ids.insert(n.car.id).second)
                failure = QStringLiteral("car %1 answered twice").arg(n.car.id);
        for (const auto &[id, d] : still)
            if (d <= radiusM && !ids.count(id))
                failure = QStringLiteral("still car %1 at %2 m missing within %3 m").arg(id).arg(d).arg(radiusM);
    }
    stop.store(true);
    writer.join();
    QVERIFY2(failure.isEmpty(), qPrintable(failure));
    QVERIFY2(moves.load() > 1000, "the writer hardly ran: no race was tested");
}

void NearbyGridTest::aCellWhoseWriterDiedIsRebuilt()
{
    // Cars 1..40 in one cell, 41..80 in another 5.5 km north; then a writer "dies" inside the
    // first cell's update (seq odd, writing mark set) leaving its list torn (the head names a car of
    // the other cell, so the centre's cars are cut off).
    const LatLng base{kCentre.lat + 0.3 * kCellLatDeg, kCentre.lng + 0.5 * kCellLngDeg}; // inside its cell
    const LatLng away{base.lat + 0.05, base.lng};
    m_fleet->initialiseCars(80, [&](int id) {
        const double spread = (id % 40) * 2 / kMetresPerDegLat; // within 78 m north: the same cell
        return LatLng{(id <= 40 ? base.lat : away.lat) + spread, base.lng};
    });
    const auto cells = reinterpret_cast<GridCell *>(m_region->base() + RegionOffsets::grid);
    const int row = int(std::floor(base.lat / kCellLatDeg)) & (kGridSide - 1);
    const int column = int(std::floor(base.lng / kCellLngDeg)) & (kGridSide - 1);
    GridCell &cell = cells[row * kGridSide + column];
    QVERIFY(cell.head.load() >= 1 && cell.head.load() <= 40); // the layout the test assumes
    const std::vector<int> before = idsOf(m_fleet->nearby(base, 150, 1000));
    QCOMPARE(before.size(), std::size_t(40));
    cell.seq.fetch_add(1);
    cell.writing.store(1);
    cell.head.store(60);
    // Readers do not wait for it: they scan the fleet, with the same answer.
    QElapsedTimer timer;
    timer.start();
    QCOMPARE(idsOf(m_fleet->nearby(base, 150, 1000)), before);
    QVERIFY2(timer.elapsed() < 500, "a reader waited for the dead writer");
    // The next writer of that cell takes it over (after kSeqlockWriterGiveUp) and rebuilds its
    // list: the grid answers right again, and keeps answering right as cars move in and out.
    m_fleet->updatePosition(41, {base.lat + 60 / kMetresPerDegLat, base.lng}, 0, 0, false);
    QCOMPARE(cell.seq.load() % 2, 0u);
    QCOMPARE(cell.writing.load(), 0u);
    std::vector<int> expected = before;
    expected.insert(expected.begin(), 41); // not in the answer's order: compared as sets below
    const std::vector<int> after = idsOf(m_fleet->nearby(base, 150, 1000));
    QCOMPARE(std::set<int>(after.begin(), after.end()), std::set<int>(expected.begin(), expected.end()));
    QCOMPARE(after, bruteForce(*m_fleet, base, 150, 1000, false));
    for (int id = 1; id <= 40; id += 2)
        m_fleet->updatePosition(id, away, 0, 0, false);
    QCOMPARE(idsOf(m_fleet->nearby(base, 150, 1000)), bruteForce(*m_fleet, base, 150, 1000, false));
    QCOMPARE(idsOf(m_fleet->nearby(away, 150, 1000)), bruteForce(*m_fleet, away, 150, 1000, false));
}

void NearbyGridTest::carMovedThroughOneWorkerIsFoundThroughTheOthers()
{
    // Two worker processes share the region; connections are spread over them (round robin), so
    // of six keep-alive connections each worker serves some. A car moved through one connection
    // must be found at its new place, and not at its old one, through every other connection.
    ServerProcess server({QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"),
                          QStringLiteral("2"), QStringLiteral("--cars"), QStringLiteral("200"),
                          QStringLiteral("--sim-speed"), QStringLiteral("0.001")});
    QString error;
    QVERIFY2(startServing(server, QStringLiteral("processes"), error), qPrintable(error));
    const QList<rt::WorkerInfo> before = rt::serving(server);
    QCOMPARE(before.size(), 2);
    constexpr int kConnections = 6;
    std::vector<std::unique_ptr<HttpClient>> clients;
    for (int i = 0; i < kConnections; ++i) {
        clients.push_back(std::make_unique<HttpClient>(server.host(), server.port()));
        QCOMPARE(clients.back()->get("/hello").status, 200); // opens the connection now
    }
    const auto finds = [](HttpClient &client, LatLng at, int id) {
        const HttpResponse r = client.get("/api/v1/cars/nearby?lat=" + QByteArray::number(at.lat, 'f', 7)
                                          + "&lng=" + QByteArray::number(at.lng, 'f', 7) + "&radius_m=20&limit=1000");
        if (r.status != 200)
            return -1;
        for (const QJsonValue &v : r.json().value(QStringLiteral("cars")).toArray())
            if (v.toObject().value(QStringLiteral("id")).toInt() == id)
                return 1;
        return 0;
    };
    std::mt19937_64 random(8);
    LatLng previous{};
    for (int move = 0; move < 24; ++move) {
        // Each move to another cell, kilometres away, in turn through each connection.
        std::uniform_real_distribution<double> dLat(-0.03, 0.03), dLng(-0.05, 0.05); // the service area
        const LatLng to{kCentre.lat + dLat(random), kCentre.lng + dLng(random)};
        HttpClient &mover = *clients[std::size_t(move % kConnections)];
        const HttpResponse put = mover.putJson("/api/v1/cars/42/position",
                                               {{"lat", to.lat}, {"lng", to.lng}, {"heading", 0}, {"speed_kmh", 0}});
        QVERIFY2(put.status == 200, put.describe().constData());
        for (int i = 0; i < kConnections; ++i) {
            QVERIFY2(finds(*clients[std::size_t(i)], to, 42) == 1,
                     qPrintable(QStringLiteral("move %1: connection %2 does not find car 42 where connection %3 put it")
                                    .arg(move)
                                    .arg(i)
                                    .arg(move % kConnections)));
            if (move > 0 && city::haversineMeters(previous, to) > 100)
                QVERIFY2(
                    finds(*clients[std::size_t(i)], previous, 42) == 0,
                    qPrintable(
                        QStringLiteral("move %1: connection %2 still finds car 42 where it was").arg(move).arg(i)));
        }
        previous = to;
    }
    // Both workers served these requests: the moves crossed processes.
    const QList<rt::WorkerInfo> after = rt::serving(server);
    QCOMPARE(after.size(), 2);
    for (const rt::WorkerInfo &w : after)
        for (const rt::WorkerInfo &b : before)
            if (b.pid == w.pid)
                QVERIFY2(
                    w.requests - b.requests >= 20,
                    qPrintable(
                        QStringLiteral("worker %1 served only %2 requests").arg(w.pid).arg(w.requests - b.requests)));
    clients.clear();
    QCOMPARE(server.stop(), 0);
}

QTEST_GUILESS_MAIN(NearbyGridTest)
#include "server_nearby_grid_test.moc"
