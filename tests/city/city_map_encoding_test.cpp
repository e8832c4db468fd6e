// The /api/v1/map encoding round-trips: every road of the bundled city decodes to its points
// within the 1e-5 degree quantisation, with its class; the bytes are built once and shared.

#include "city/MapEncoding.h"
#include "city/City.h"
#include "CityTestSupport.h"

#include <QTest>

using namespace taxicore::city;

class MapEncodingTest : public QObject {
    Q_OBJECT
private slots:
    void smallMapRoundTrips()
    {
        const std::vector<RoadPolyline> roads = {
            {RoadClass::Primary, {{57.7, 11.97}, {57.70001, 11.97002}, {57.7000100001, 11.9700200001}}},
            {RoadClass::Service, {{57.71, 11.98}, {57.710001, 11.980001}}}, // rounds to one point
        };
        const QByteArray bytes = encodeMapJson(roads, {{57.6, 11.9}, {57.8, 12.1}});
        QVERIFY(bytes.contains("\"attribution\":\"© OpenStreetMap contributors, ODbL 1.0\""));
        const std::optional<DecodedMap> decoded = decodeMapJson(bytes);
        QVERIFY(decoded);
        QCOMPARE(decoded->roads.size(), size_t(2));
        QCOMPARE(decoded->roads[0].points.size(), size_t(2)); // duplicate after rounding dropped
        QCOMPARE(decoded->roads[1].points.size(), size_t(2)); // but a road keeps two points
        QCOMPARE(decoded->roads[1].roadClass, RoadClass::Service);
        QCOMPARE(decoded->bounds.max.lng, 12.1);
        QVERIFY(!decodeMapJson("{\"format\":\"other\"}"));
    }

    void bundledCityRoundTrips()
    {
        const CityLoadResult loaded = City::load(citytest::bundledCityPath());
        QVERIFY2(loaded.city, qPrintable(loaded.error));
        const std::vector<RoadPolyline> roads = loaded.city->roadPolylines();
        const QByteArray &bytes = loaded.city->mapJson();
        QVERIFY(&bytes == &loaded.city->mapJson());
        qInfo("map: %lld bytes for %zu roads", qlonglong(bytes.size()), roads.size());
        const std::optional<DecodedMap> decoded = decodeMapJson(bytes);
        QVERIFY(decoded);
        QCOMPARE(decoded->roads.size(), roads.size());
        constexpr double kHalfUnit = 0.5 / kMapScale + 1e-12;
        for (size_t r = 0; r < roads.size(); ++r) {
            const RoadPolyline &original = roads[r];
            const RoadPolyline &copy = decoded->roads[r];
            QCOMPARE(copy.roadClass, original.roadClass);
            QVERIFY(copy.points.size() >= 2 && copy.points.size() <= original.points.size());
            QVERIFY(std::abs(copy.points.front().lat - original.points.front().lat) <= kHalfUnit);
            QVERIFY(std::abs(copy.points.back().lng - original.points.back().lng) <= kHalfUnit);
            // Every decoded point is within half a unit of some original point, in order.
            size_t next = 0;
            for (const GeoPoint &p : copy.points) {
                while (next < original.points.size()
                       && (std::abs(original.points[next].lat - p.lat) > kHalfUnit
                           || std::abs(original.points[next].lng - p.lng) > kHalfUnit))
                    ++next;
                QVERIFY(next < original.points.size());
            }
        }
    }
};

QTEST_GUILESS_MAIN(MapEncodingTest)
#include "city_map_encoding_test.moc"
