// Routing on the bundled city: the contraction-hierarchy router agrees with a plain Dijkstra,
// snapping finds the nearest road piece, one-to-many ETAs equal single routes, and concurrent
// queries agree with sequential ones.

#include "city/City.h"
#include "CityTestSupport.h"
#include "city/EtaSearch.h"
#include "city/GeoQt.h"

#include <QTest>
#include <thread>

using namespace taxicore::city;

namespace {
constexpr int kRandomPairs = 250;
constexpr double kCostTolerance = 1e-6; // seconds

bool close(double a, double b)
{
    return a == b || std::abs(a - b) <= kCostTolerance * std::max(1.0, std::abs(b));
}

// Distance in metres from p to the nearest piece of any road: brute force over every piece,
// in the same local flat projection the library documents (equirectangular at the bbox centre).
double bruteForceNearestM(const CityData &data, GeoPoint p, GeoPoint centre)
{
    const double kx = kMetersPerDegreeLat * std::cos(centre.lat * M_PI / 180);
    const double ky = kMetersPerDegreeLat;
    double best = INFINITY;
    for (uint32_t s = 0; s < data.segments.size(); ++s) {
        const auto shape = data.shape(s);
        for (size_t i = 0; i + 1 < shape.size(); ++i) {
            const GeoPoint a = CityData::geo(shape[i]);
            const GeoPoint b = CityData::geo(shape[i + 1]);
            const double ax = (a.lng - p.lng) * kx, ay = (a.lat - p.lat) * ky;
            const double bx = (b.lng - p.lng) * kx, by = (b.lat - p.lat) * ky;
            const double dx = bx - ax, dy = by - ay;
            const double len2 = dx * dx + dy * dy;
            const double t = len2 > 0 ? std::clamp(-(ax * dx + ay * dy) / len2, 0.0, 1.0) : 0.0;
            best = std::min(best, std::hypot(ax + t * dx, ay + t * dy));
        }
    }
    return best;
}
} // namespace

class RoutingTest : public QObject {
    Q_OBJECT
private:
    std::shared_ptr<const City> m_city;

    std::vector<RoadPoint> randomPoints(uint64_t seed, int count) const
    {
        std::mt19937_64 rng(seed);
        std::vector<RoadPoint> points;
        const GeoBounds b = m_city->bounds();
        std::uniform_real_distribution<double> lat(b.min.lat, b.max.lat), lng(b.min.lng, b.max.lng);
        for (int i = 0; i < count; ++i) // half spawned on roads, half snapped from anywhere
            points.push_back(i % 2 ? m_city->randomRoadPoint(rng) : m_city->snap({lat(rng), lng(rng)}));
        return points;
    }

private slots:
    void initTestCase()
    {
        const CityLoadResult loaded = City::load(citytest::bundledCityPath());
        QVERIFY2(loaded.city, qPrintable(loaded.error));
        m_city = loaded.city;
        QVERIFY(m_city->data().nodes.size() > 10000);
    }

    void routesEqualPlainDijkstra()
    {
        const std::vector<RoadPoint> points = randomPoints(7, 2 * kRandomPairs);
        for (int i = 0; i < kRandomPairs; ++i) {
            const RoadPoint &from = points[2 * i];
            const RoadPoint &to = points[2 * i + 1];
            const Route route = m_city->route(from, to);
            const double reference = citytest::referenceDurationS(m_city->data(), from, to);
            QVERIFY2(route.found, qPrintable(QStringLiteral("pair %1").arg(i)));
            QVERIFY2(
                close(route.durationS, reference),
                qPrintable(QStringLiteral("pair %1: %2 s, Dijkstra %3 s").arg(i).arg(route.durationS).arg(reference)));
            QCOMPARE(route.polyline.front().lat, from.point.lat);
            QCOMPARE(route.polyline.back().lng, to.point.lng);
            const double drawn = citytest::polylineLengthM(route.polyline);
            QVERIFY2(
                std::abs(drawn - route.distanceM) < 0.5 + 1e-3 * route.distanceM,
                qPrintable(
                    QStringLiteral("pair %1: polyline %2 m, distance %3 m").arg(i).arg(drawn).arg(route.distanceM)));
        }
    }

    void qtPositioningViewsMatch()
    {
        const Route route = m_city->route(m_city->centre(), GeoPoint{57.70, 11.95});
        QVERIFY(route.found);
        const QGeoPath path = toQGeoPath(route.polyline);
        QCOMPARE(path.size(), qsizetype(route.polyline.size()));
        QVERIFY(toQGeoRectangle(m_city->bounds()).contains(toQGeoCoordinate(m_city->centre())));
        QCOMPARE(fromQGeoCoordinate(path.coordinateAt(0)).lat, route.polyline.front().lat);
    }

    void routeToItselfIsEmpty()
    {
        const RoadPoint p = m_city->snap(m_city->centre());
        const Route route = m_city->route(p, p);
        QVERIFY(route.found);
        QCOMPARE(route.durationS, 0.0);
        QCOMPARE(route.distanceM, 0.0);
    }

    void snappingFindsTheNearestRoadPiece()
    {
        std::mt19937_64 rng(11);
        const GeoBounds b = m_city->bounds();
        std::uniform_real_distribution<double> lat(b.min.lat, b.max.lat), lng(b.min.lng, b.max.lng);
        for (int i = 0; i < 150; ++i) {
            const GeoPoint p{lat(rng), lng(rng)};
            const RoadPoint snapped = m_city->snap(p);
            QVERIFY(snapped.valid);
            const double expected = bruteForceNearestM(m_city->data(), p, m_city->centre());
            QVERIFY2(std::abs(snapped.distanceM - expected) < 1e-6,
                     qPrintable(QStringLiteral("%1,%2: snapped %3 m, nearest %4 m")
                                    .arg(p.lat)
                                    .arg(p.lng)
                                    .arg(snapped.distanceM)
                                    .arg(expected)));
        }
    }

    void snappingCarsOnAndNearRoadsFindsTheNearestPiece()
    {
        // What nearby's ETAs snap: cars on a road, or a few metres off it (a device's GPS), and
        // points just either side of the snapping grid's cell sides, where the search may stop
        // after the point's own cell only if nothing outside it can be nearer.
        std::mt19937_64 rng(12);
        const CityData &data = m_city->data();
        const format::Header &h = *data.header;
        std::uniform_real_distribution<double> offsetM(-30, 30), unit(0, 1);
        const double metersPerDegreeLng = kMetersPerDegreeLat * std::cos(m_city->centre().lat * M_PI / 180);
        for (int i = 0; i < 400; ++i) {
            GeoPoint p = m_city->randomRoadPoint(rng).point;
            if (i % 4 == 1) { // off the road by up to 30 m
                p.lat += offsetM(rng) / kMetersPerDegreeLat;
                p.lng += offsetM(rng) / metersPerDegreeLng;
            } else if (i % 4 == 2) { // onto the nearest cell side, then a hair either side of it
                const double cellLat = h.gridCellSize.lat / kCoordUnitsPerDegree;
                const double originLat = h.gridOrigin.lat / kCoordUnitsPerDegree;
                const double side = originLat + std::round((p.lat - originLat) / cellLat) * cellLat;
                p.lat = side + (unit(rng) - 0.5) * 1e-9;
            }
            const RoadPoint snapped = m_city->snap(p);
            QVERIFY(snapped.valid);
            const double expected = bruteForceNearestM(data, p, m_city->centre());
            QVERIFY2(std::abs(snapped.distanceM - expected) < 1e-6,
                     qPrintable(QStringLiteral("%1,%2: snapped %3 m, nearest %4 m")
                                    .arg(p.lat, 0, 'f', 9)
                                    .arg(p.lng, 0, 'f', 9)
                                    .arg(snapped.distanceM)
                                    .arg(expected)));
        }
    }

    void snappingSideStepsToTheRightSegment()
    {
        // A point 2 m beside the middle of a straight segment snaps onto that segment, 2 m away.
        constexpr double kBesideM = 2.0;
        const CityData &data = m_city->data();
        const double metersPerDegreeLng = kMetersPerDegreeLat * std::cos(m_city->centre().lat * M_PI / 180);
        int checked = 0;
        for (uint32_t s = 0; s < data.segments.size() && checked < 100; s += 7) {
            if (data.segments[s].lengthM < 100 || data.shape(s).size() != 2)
                continue;
            const GeoPoint a = CityData::geo(data.shape(s)[0]), b = CityData::geo(data.shape(s)[1]);
            const double dx = (b.lng - a.lng) * metersPerDegreeLng, dy = (b.lat - a.lat) * kMetersPerDegreeLat;
            const double length = std::hypot(dx, dy);
            const GeoPoint beside{(a.lat + b.lat) / 2 + dx / length * kBesideM / kMetersPerDegreeLat,
                                  (a.lng + b.lng) / 2 - dy / length * kBesideM / metersPerDegreeLng};
            const RoadPoint snapped = m_city->snap(beside);
            if (snapped.segment != s && snapped.distanceM < kBesideM)
                continue; // another road really is closer (overlapping carriageways)
            QCOMPARE(snapped.segment, s);
            QVERIFY(std::abs(snapped.distanceM - kBesideM) < 1e-3);
            QVERIFY(std::abs(snapped.offsetM - data.segments[s].lengthM / 2) < 0.5);
            ++checked;
        }
        QVERIFY(checked >= 50);
    }

    void farAwayPointsStillSnap()
    {
        QVERIFY(m_city->snap({0, 0}).valid);
        QVERIFY(m_city->snap({89, 179}).valid);
        QVERIFY(m_city->bounds().contains(m_city->snap({57.0, 11.0}).point));
        QVERIFY(m_city->snap({1e300, -1e300}).valid);
        QVERIFY(!m_city->snap({std::nan(""), 11.9}).valid);
        QVERIFY(!m_city->route(GeoPoint{std::nan(""), 0}, m_city->centre()).found);
    }

    void randomRoadPointsLieOnRoads()
    {
        std::mt19937_64 rng(3);
        for (int i = 0; i < 200; ++i) {
            const RoadPoint p = m_city->randomRoadPoint(rng);
            QVERIFY(p.valid);
            QVERIFY(m_city->snap(p.point).distanceM < 0.05);
        }
    }

    void oneToManyEtaEqualsSingleRoutes()
    {
        const std::vector<RoadPoint> sources = randomPoints(21, 50);
        const std::vector<RoadPoint> targets = randomPoints(22, 10);
        for (const RoadPoint &target : targets) {
            const std::vector<double> unlimited = m_city->etaTo(target, sources, 1e9);
            const std::vector<double> limited = m_city->etaTo(target, sources, 300);
            for (size_t i = 0; i < sources.size(); ++i) {
                const double single = m_city->route(sources[i], target).durationS;
                QVERIFY2(close(unlimited[i], single),
                         qPrintable(QStringLiteral("%1 vs %2").arg(unlimited[i]).arg(single)));
                if (single <= 300)
                    QVERIFY(close(limited[i], single));
                else
                    QCOMPARE(limited[i], kUnreachable);
            }
        }
    }

    void fleetSizedEtaUsesOneReverseSearchWithTheSameAnswers()
    {
        const std::vector<RoadPoint> fleet = randomPoints(31, int(kBucketSearchMaxSources) + 100);
        const std::vector<RoadPoint> few(fleet.begin(), fleet.begin() + 50);
        for (const RoadPoint &target : randomPoints(32, 3)) {
            const std::vector<double> all = m_city->etaTo(target, fleet, 600);
            const std::vector<double> some = m_city->etaTo(target, few, 600);
            for (size_t i = 0; i < fleet.size(); ++i) {
                const double single = m_city->route(fleet[i], target).durationS;
                if (single <= 600)
                    QVERIFY2(close(all[i], single), qPrintable(QStringLiteral("%1 vs %2").arg(all[i]).arg(single)));
                else
                    QCOMPARE(all[i], kUnreachable);
                if (i < few.size())
                    QVERIFY(close(some[i], all[i]));
            }
        }
    }

    void concurrentQueriesAgreeWithSequentialOnes()
    {
        const std::vector<RoadPoint> points = randomPoints(99, 200);
        std::vector<double> sequential;
        for (size_t i = 0; i + 1 < points.size(); i += 2)
            sequential.push_back(m_city->route(points[i], points[i + 1]).durationS);
        std::vector<std::vector<double>> results(4);
        std::vector<std::thread> threads;
        for (auto &result : results) {
            threads.emplace_back([&] {
                for (size_t i = 0; i + 1 < points.size(); i += 2)
                    result.push_back(m_city->route(points[i], points[i + 1]).durationS);
            });
        }
        for (std::thread &thread : threads)
            thread.join();
        for (const auto &result : results)
            QVERIFY(result == sequential);
    }
};

QTEST_GUILESS_MAIN(RoutingTest)
#include "city_routing_test.moc"
