// The importer on small hand-written fixtures: GeoJSON, .osm and .osm.pbf give the same graph;
// non-drivable classes and unreachable islands are dropped; ways split at shared nodes; one-way
// and maxspeed rules applied; the written file loads and routes around the one-way street.

#include "city/CityImporter.h"
#include "city/City.h"
#include "CityTestSupport.h"
#include "city/GeoJsonImporter.h"
#include "city/OsmImporter.h"
#include "city/RoadGraphBuilder.h"

#include <QTemporaryDir>
#include <QTest>

#ifdef TAXICORE_HAVE_OSMIUM
#include <osmium/io/any_input.hpp>
#include <osmium/io/any_output.hpp>
#endif

using namespace taxicore::city;

namespace {
const RoadSegment *findSegment(const RoadGraph &graph, const std::string &name, size_t shapePoints)
{
    for (const RoadSegment &segment : graph.segments) {
        if (segment.nameIndex != format::kNoName && graph.names[segment.nameIndex] == name
            && segment.shape.size() == shapePoints)
            return &segment;
    }
    return nullptr;
}

// Fixture coordinates (see fixtures/small-network.geojson).
constexpr GeoPoint kOnEttanEast{57.700, 11.978};
constexpr GeoPoint kOnEttanWest{57.700, 11.972};
} // namespace

class CityImporterTest : public QObject {
    Q_OBJECT
private:
    void checkSmallNetwork(const RoadGraph &graph)
    {
        // Ettan (N1-N2), Tvåan split at Mellan's junction (N2-N3-M, M-N4-N1), Mellan (M-E);
        // footway, cycleway, private service road, steps, area and the island are gone.
        QCOMPARE(graph.nodes.size(), size_t(4));
        QCOMPARE(graph.segments.size(), size_t(4));
        QCOMPARE(graph.names.size(), size_t(3));

        const RoadSegment *ettan = findSegment(graph, "Ettan", 2);
        QVERIFY(ettan);
        QVERIFY(ettan->forwardMs != format::kNotAllowed);
        QCOMPARE(ettan->backwardMs, format::kNotAllowed);
        QCOMPARE(ettan->speedKmh, 50.0);
        QCOMPARE(ettan->roadClass, RoadClass::Primary);
        QVERIFY(std::abs(ettan->lengthM - 595.6) < 2.0);
        QCOMPARE(ettan->forwardMs, travelTimeMs(ettan->lengthM, 50));

        int tvaanParts = 0;
        for (const RoadSegment &segment : graph.segments) {
            if (segment.nameIndex == format::kNoName || graph.names[segment.nameIndex] != "Tvåan")
                continue;
            ++tvaanParts;
            QCOMPARE(segment.shape.size(), size_t(3));
            QVERIFY(segment.forwardMs != format::kNotAllowed && segment.backwardMs != format::kNotAllowed);
            QCOMPARE(segment.speedKmh, defaultSpeedKmh(RoadClass::Residential));
        }
        QCOMPARE(tvaanParts, 2);

        const RoadSegment *mellan = findSegment(graph, "Mellan", 2);
        QVERIFY(mellan);
        QCOMPARE(mellan->speedKmh, 20 * 1.609344);
    }

private slots:
    void geoJsonWaysAreSplitAndFiltered()
    {
        const WayReadResult read = readGeoJsonWays(citytest::fixturePath("small-network.geojson"));
        QVERIFY2(read.error.isEmpty(), qPrintable(read.error));
        QCOMPARE(read.ways.size(), size_t(8)); // the Polygon area is not a way
        RoadGraphStats stats;
        const RoadGraph graph = buildRoadGraph(read.ways, &stats);
        QCOMPARE(stats.waysDrivable, size_t(4));               // Ettan, Tvåan, Mellan, island
        QCOMPARE(stats.nodesBeforeComponentFilter, size_t(6)); // island's two nodes included
        checkSmallNetwork(graph);
    }

    void osmXmlGivesTheSameGraph()
    {
        if (!osmImportAvailable())
            QSKIP("built without libosmium (apt-get install libosmium2-dev, then configure again)");
        const WayReadResult read = readOsmWays(citytest::fixturePath("small-network.osm"));
        QVERIFY2(read.error.isEmpty(), qPrintable(read.error));
        checkSmallNetwork(buildRoadGraph(read.ways));
    }

    void osmPbfGivesTheSameGraph()
    {
#ifdef TAXICORE_HAVE_OSMIUM
        QTemporaryDir dir;
        const QString pbf = dir.filePath(QStringLiteral("small-network.osm.pbf"));
        {
            osmium::io::Reader reader(citytest::fixturePath("small-network.osm").toStdString());
            osmium::io::Writer writer(pbf.toStdString());
            while (osmium::memory::Buffer buffer = reader.read())
                writer(std::move(buffer));
            writer.close();
            reader.close();
        }
        const WayReadResult read = readOsmWays(pbf);
        QVERIFY2(read.error.isEmpty(), qPrintable(read.error));
        checkSmallNetwork(buildRoadGraph(read.ways));
#else
        QSKIP("built without libosmium (apt-get install libosmium2-dev, then configure again)");
#endif
    }

    void importedFileRoutesAroundTheOnewayStreet()
    {
        QTemporaryDir dir;
        const QString out = dir.filePath(QStringLiteral("small.taxicity"));
        ImportReport report;
        const QString error = importCity(citytest::fixturePath("small-network.geojson"), out, &report);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const CityLoadResult loaded = City::load(out);
        QVERIFY2(loaded.city, qPrintable(loaded.error));
        const City &city = *loaded.city;

        const RoadPoint east = city.snap(kOnEttanEast);
        const RoadPoint west = city.snap(kOnEttanWest);
        QVERIFY(east.distanceM < 0.5 && west.distanceM < 0.5);
        QCOMPARE(city.streetName(east), std::string_view("Ettan"));

        // With the one-way direction: straight along Ettan, 0.006 deg of longitude.
        const Route along = city.route(west, east);
        QVERIFY(along.found);
        QVERIFY2(std::abs(along.distanceM - 357.4) < 2, qPrintable(QString::number(along.distanceM)));
        QCOMPARE(along.polyline.size(), size_t(2));

        // Against it: on to N2, around the whole Tvåan loop back to N1, then along Ettan.
        const Route back = city.route(east, west);
        QVERIFY(back.found);
        const double loop = 2 * 556.0 + 595.6;
        const double expected = 119.1 + loop + 119.1;
        QVERIFY2(std::abs(back.distanceM - expected) < 5, qPrintable(QString::number(back.distanceM)));
        QVERIFY(back.durationS > along.durationS * 4);
        QVERIFY(std::abs(citytest::polylineLengthM(back.polyline) - back.distanceM) < 1);
        QCOMPARE(back.durationS, citytest::referenceDurationS(city.data(), east, west));
    }

    void missingInputIsAClearError()
    {
        QTemporaryDir dir;
        const QString error =
            importCity(QStringLiteral("/nonexistent/roads.geojson"), dir.filePath(QStringLiteral("x")));
        QVERIFY(error.contains(QLatin1String("/nonexistent/roads.geojson")));
    }
};

QTEST_GUILESS_MAIN(CityImporterTest)
#include "city_importer_test.moc"
