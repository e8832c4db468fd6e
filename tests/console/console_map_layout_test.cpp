// The map's pure layout decisions, without a window: the scale bar's length, cars grouped
// into counted cells when zoomed out, street labels that never overlap, and the projection
// those are computed in.
#include "CarClusters.h"
#include "CarTrails.h"
#include "MapProjection.h"
#include "MapScale.h"
#include "MapViewport.h"
#include "StreetLabels.h"

#include <QRandomGenerator>
#include <QTest>
#include <cmath>
#include <limits>
#include <numbers>

class MapLayoutTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void scaleBarPicksTheLongestRoundLengthThatFits_data();
    void scaleBarPicksTheLongestRoundLengthThatFits();
    void scaleBarFollowsTheZoom();
    void scaleBarOfANonsenseZoomIsEmpty();
    void projectionKeepsDistances();

    void clustersCountEveryCarInViewOnce();
    void clusterCirclesNeverOverlap();
    void aCellOfOneCarNamesIt();
    void panningKeepsCarsInTheirCells();
    void clusterCountsReadShort();

    void labelsNeverOverlapAndStayInView();
    void labelsTurnWithTheirStreetButNeverUpsideDown();
    void minorStreetsAreNamedOnlyWhenZoomedIn();
    void aWindingStreetGetsNoLabel();
    void twoCarriagewaysShowTheirNameOnce();
    void labelsKeepOffTheControls();

    void trailKeepsTheLastPositionsOldestFirst();
    void trailSamplesOncePerInterval();
    void aJumpStartsANewTrail();
};

namespace {
MapViewport cityView()
{
    MapViewport view;
    view.setSize({900, 700});
    view.fit({-7000, -6000}, {7000, 6000}); // about the bundled city, 0.058 px/m
    return view;
}

std::vector<CarMarker> randomCars(int count, QRectF area, quint32 seed)
{
    QRandomGenerator rng(seed);
    std::vector<CarMarker> cars;
    for (int i = 1; i <= count; ++i) {
        const QPointF at(area.left() + rng.generateDouble() * area.width(),
                         area.top() + rng.generateDouble() * area.height());
        cars.push_back({i, at, 0, taxicore::CarState(rng.bounded(5))});
    }
    return cars;
}

NamedStreet street(const QString &name, int rank, std::vector<QPointF> points)
{
    NamedStreet s{name, rank, std::move(points), {}};
    QRectF bounds(s.points.front(), QSizeF(0, 0));
    for (const QPointF &p : s.points)
        bounds = bounds.united(QRectF(p, QSizeF(0.001, 0.001)));
    s.bounds = bounds;
    return s;
}

// About 6 px a letter, as an 11 px font.
StreetLabels::Measure measure()
{
    return [](const QString &text) { return QSizeF(6.0 * double(text.size()), 13); };
}
} // namespace

void MapLayoutTest::scaleBarPicksTheLongestRoundLengthThatFits_data()
{
    QTest::addColumn<double>("metresPerPixel");
    QTest::addColumn<double>("maxPx");
    QTest::addColumn<double>("metres");
    QTest::addColumn<QString>("label");
    QTest::newRow("whole city") << 16.0 << 120.0 << 1000.0 << "1 km"; // room 1,920 m
    QTest::newRow("just fits 2 km") << 20.0 << 100.0 << 2000.0 << "2 km";
    QTest::newRow("district") << 4.0 << 120.0 << 200.0 << "200 m";      // room 480 m
    QTest::newRow("five hundred") << 5.0 << 120.0 << 500.0 << "500 m";  // room 600 m
    QTest::newRow("street corner") << 0.125 << 120.0 << 10.0 << "10 m"; // room 15 m
    QTest::newRow("region") << 200.0 << 120.0 << 20000.0 << "20 km";    // room 24 km
}

void MapLayoutTest::scaleBarPicksTheLongestRoundLengthThatFits()
{
    QFETCH(double, metresPerPixel);
    QFETCH(double, maxPx);
    QFETCH(double, metres);
    QFETCH(QString, label);
    const ScaleBarChoice bar = MapScale::choose(metresPerPixel, maxPx);
    QCOMPARE(bar.metres, metres);
    QCOMPARE(bar.label, label);
    QVERIFY(bar.px <= maxPx + 1e-9);
    QVERIFY(bar.px > maxPx / 2.5); // a 1-2-5 step never leaves more than 2.5× unused
    QCOMPARE(bar.px, metres / metresPerPixel);
}

void MapLayoutTest::scaleBarFollowsTheZoom()
{
    MapViewport view;
    view.setSize({800, 600});
    view.fit({-7000, -6000}, {7000, 6000});
    const double before = MapScale::choose(1 / view.scale(), 120).metres;
    view.zoomAt({400, 300}, 8);
    const double after = MapScale::choose(1 / view.scale(), 120).metres;
    QVERIFY2(after < before, qPrintable(QStringLiteral("%1 m then %2 m").arg(before).arg(after)));
}

void MapLayoutTest::scaleBarOfANonsenseZoomIsEmpty()
{
    QCOMPARE(MapScale::choose(0, 120).metres, 0.0);
    QCOMPARE(MapScale::choose(std::numeric_limits<double>::infinity(), 120).metres, 0.0);
    QCOMPARE(MapScale::choose(5, 0).label, QString());
}

void MapLayoutTest::projectionKeepsDistances()
{
    // Centralstationen to Götaplatsen, and across the city: within 1 % of the great circle.
    const MapProjection projection;
    const auto check = [&](double lat1, double lng1, double lat2, double lng2) {
        const QPointF a = projection.toMetres(lat1, lng1);
        const QPointF b = projection.toMetres(lat2, lng2);
        const double flat = std::hypot(a.x() - b.x(), a.y() - b.y());
        const double rad = std::numbers::pi / 180;
        const double h = std::pow(std::sin((lat2 - lat1) * rad / 2), 2)
                         + std::cos(lat1 * rad) * std::cos(lat2 * rad) * std::pow(std::sin((lng2 - lng1) * rad / 2), 2);
        const double sphere = 2 * 6371008.8 * std::asin(std::sqrt(h));
        QVERIFY2(std::abs(flat - sphere) < sphere * 0.01, qPrintable(QStringLiteral("%1 vs %2").arg(flat).arg(sphere)));
    };
    check(57.7089, 11.9730, 57.6964, 11.9799);
    check(57.65, 11.86, 57.76, 12.09);
}

void MapLayoutTest::clustersCountEveryCarInViewOnce()
{
    const MapViewport view = cityView();
    // Half the cars in view, half far outside it.
    auto cars = randomCars(3000, {-6000, -5000, 12000, 10000}, 1);
    const auto outside = randomCars(3000, {40000, 40000, 5000, 5000}, 2);
    cars.insert(cars.end(), outside.begin(), outside.end());
    const auto clusters = CarClusters::build(cars, view);
    int total = 0;
    for (const auto &c : clusters) {
        total += c.count;
        int byState = 0;
        for (const int n : c.byState)
            byState += n;
        QCOMPARE(byState, c.count);
        QVERIFY(c.count >= 1);
    }
    QCOMPARE(total, 3000);
    // At this zoom a 64 px cell is over a kilometre: a few hundred cells, not thousands of specks.
    QVERIFY2(clusters.size() < 250, qPrintable(QString::number(clusters.size())));
}

void MapLayoutTest::clusterCirclesNeverOverlap()
{
    MapViewport view = cityView();
    for (const double zoom : {1.0, 1.7, 2.3}) {
        view.zoomAt({450, 350}, zoom);
        const auto clusters = CarClusters::build(randomCars(10000, {-7000, -6000, 14000, 12000}, 3), view);
        for (size_t i = 0; i < clusters.size(); ++i) {
            QVERIFY(clusters[i].radius <= CarClusters::kCellPx / 2);
            for (size_t j = i + 1; j < clusters.size(); ++j) {
                const QPointF d = clusters[i].screen - clusters[j].screen;
                QVERIFY2(std::hypot(d.x(), d.y()) >= clusters[i].radius + clusters[j].radius,
                         qPrintable(QStringLiteral("clusters %1 and %2 at zoom %3").arg(i).arg(j).arg(zoom)));
            }
        }
    }
}

void MapLayoutTest::aCellOfOneCarNamesIt()
{
    const MapViewport view = cityView();
    const std::vector<CarMarker> cars{{7, {0, 0}, 0, taxicore::CarState::Available},
                                      {8, {4000, 3000}, 0, taxicore::CarState::OnTrip},
                                      {9, {4010, 3005}, 0, taxicore::CarState::Available}};
    const auto clusters = CarClusters::build(cars, view);
    QCOMPARE(clusters.size(), size_t(2));
    const auto single = std::find_if(clusters.begin(), clusters.end(), [](const auto &c) { return c.count == 1; });
    QVERIFY(single != clusters.end());
    QCOMPARE(single->carId, 7);
    QCOMPARE(single->carIndex, size_t(0));
    const auto pair = std::find_if(clusters.begin(), clusters.end(), [](const auto &c) { return c.count == 2; });
    QVERIFY(pair != clusters.end());
    QCOMPARE(pair->byState[size_t(taxicore::CarState::OnTrip)], 1);
    QCOMPARE(pair->byState[size_t(taxicore::CarState::Available)], 1);
}

void MapLayoutTest::panningKeepsCarsInTheirCells()
{
    MapViewport view = cityView();
    const auto cars = randomCars(2000, {-3000, -3000, 6000, 6000}, 4);
    const auto counts = [&] {
        std::vector<int> out;
        for (const auto &c : CarClusters::build(cars, view))
            out.push_back(c.count);
        std::sort(out.begin(), out.end());
        return out;
    };
    const auto before = counts();
    view.panBy({37, -23}); // not a whole number of cells; every car stays in view
    QCOMPARE(counts(), before);
}

void MapLayoutTest::clusterCountsReadShort()
{
    QCOMPARE(CarClusters::countLabel(37), QStringLiteral("37"));
    QCOMPARE(CarClusters::countLabel(999), QStringLiteral("999"));
    QCOMPARE(CarClusters::countLabel(1234), QStringLiteral("1.2k"));
    QCOMPARE(CarClusters::countLabel(12345), QStringLiteral("12k"));
    QVERIFY(CarClusters::radiusFor(1000) > CarClusters::radiusFor(2));
}

void MapLayoutTest::labelsNeverOverlapAndStayInView()
{
    // A dense grid of long straight streets, both ways, and diagonals across it.
    std::vector<NamedStreet> streets;
    for (int i = -10; i <= 10; ++i) {
        const double at = i * 150.0;
        streets.push_back(street(QStringLiteral("Östra gatan %1").arg(i), 0, {{-2000, at}, {0, at}, {2000, at}}));
        streets.push_back(street(QStringLiteral("Norra vägen %1").arg(i), 0, {{at, -2000}, {at, 0}, {at, 2000}}));
        streets.push_back(street(QStringLiteral("Diagonalen %1").arg(i), 0, {{at - 2000, -2000}, {at + 2000, 2000}}));
    }
    MapViewport view;
    view.setSize({800, 600});
    view.fit({-1500, -1200}, {1500, 1200});
    const auto labels = StreetLabels::place(streets, view, measure());
    QVERIFY2(labels.size() >= 10, qPrintable(QString::number(labels.size())));
    QVERIFY(int(labels.size()) <= StreetLabels::kMaxLabels);
    const QRectF screen(0, 0, 800, 600);
    for (size_t i = 0; i < labels.size(); ++i) {
        const QPolygonF a = labels[i].box();
        QVERIFY2(screen.contains(a.boundingRect()), qPrintable(labels[i].text));
        for (size_t j = i + 1; j < labels.size(); ++j) {
            // Qt's polygon intersection as the judge, independent of the placement's own test.
            QVERIFY2(!a.intersects(labels[j].box()),
                     qPrintable(QStringLiteral("%1 / %2").arg(labels[i].text, labels[j].text)));
        }
    }
}

void MapLayoutTest::labelsTurnWithTheirStreetButNeverUpsideDown()
{
    MapViewport view;
    view.setSize({800, 600});
    view.fit({-1000, -750}, {1000, 750});
    // Drawn right to left and bottom to top: the labels must still read left to right.
    const std::vector<NamedStreet> streets{street(QStringLiteral("Avenyn"), 0, {{900, 0}, {-900, 0}}),
                                           street(QStringLiteral("Backen"), 0, {{300, 600}, {-300, -600}})};
    const auto labels = StreetLabels::place(streets, view, measure());
    for (const QString &name : {QStringLiteral("Avenyn"), QStringLiteral("Backen")})
        QVERIFY(std::any_of(labels.begin(), labels.end(), [&](const auto &l) { return l.text == name; }));
    for (const auto &label : labels) {
        QVERIFY2(label.angle > -90 && label.angle <= 90, qPrintable(QString::number(label.angle)));
        if (label.text == QStringLiteral("Avenyn"))
            QVERIFY(std::abs(label.angle) < 1e-6);
        else // screen y grows downwards: up-left to down-right reads at +63°
            QVERIFY2(std::abs(label.angle - std::atan2(1200.0, 600.0) * 180 / std::numbers::pi) < 1e-6,
                     qPrintable(QString::number(label.angle)));
    }
}

void MapLayoutTest::minorStreetsAreNamedOnlyWhenZoomedIn()
{
    const std::vector<NamedStreet> streets{street(QStringLiteral("Storgatan"), 0, {{-3000, 0}, {3000, 0}}),
                                           street(QStringLiteral("Lillgatan"), 2, {{-3000, 500}, {3000, 500}})};
    MapViewport view;
    view.setSize({800, 600});
    view.fit({-3500, -2500}, {3500, 2500}); // 0.11 px/m
    view.zoomAt({400, 300}, StreetLabels::kMajorFromScale / view.scale() * 1.01);
    auto labels = StreetLabels::place(streets, view, measure());
    QVERIFY(!labels.empty());
    for (const auto &label : labels)
        QCOMPARE(label.text, QStringLiteral("Storgatan"));
    view.zoomAt({400, 300}, StreetLabels::kMinorFromScale / view.scale() * 1.01);
    view.panBy({0, -500 * view.scale()}); // Lillgatan across the middle of the view
    labels = StreetLabels::place(streets, view, measure());
    QVERIFY(std::any_of(labels.begin(), labels.end(), [](const auto &l) { return l.text == "Lillgatan"; }));
}

void MapLayoutTest::aWindingStreetGetsNoLabel()
{
    MapViewport view;
    view.setSize({800, 600});
    view.fit({-1000, -750}, {1000, 750});
    // A zigzag with 60° turns every 20 m: nowhere straight for a name's length.
    std::vector<QPointF> zigzag;
    for (int i = 0; i < 60; ++i)
        zigzag.emplace_back(-600 + i * 20.0, (i % 2) * 35.0);
    const auto labels = StreetLabels::place({street(QStringLiteral("Serpentinvägen"), 0, zigzag)}, view, measure());
    QVERIFY(labels.empty());
}

void MapLayoutTest::twoCarriagewaysShowTheirNameOnce()
{
    MapViewport view;
    view.setSize({800, 600});
    view.fit({-400, -300}, {400, 300}); // 1 px/m
    // Two one-way halves of one avenue, 40 m apart: one label, not two side by side.
    const std::vector<NamedStreet> streets{street(QStringLiteral("Nya Allén"), 0, {{-350, 0}, {-50, 0}}),
                                           street(QStringLiteral("Nya Allén"), 0, {{-50, 40}, {-350, 40}})};
    QCOMPARE(StreetLabels::place(streets, view, measure()).size(), size_t(1));
}

void MapLayoutTest::labelsKeepOffTheControls()
{
    MapViewport view;
    view.setSize({800, 600});
    view.fit({-400, -300}, {400, 300});
    const std::vector<NamedStreet> streets{street(QStringLiteral("Kustgatan"), 0, {{-390, 280}, {390, 280}})};
    QCOMPARE(StreetLabels::place(streets, view, measure()).size(), size_t(2));
    // The scale bar and the attribution along the bottom edge.
    const std::vector<QRectF> controls{QRectF(0, 560, 800, 40)};
    QVERIFY(StreetLabels::place(streets, view, measure(), controls).empty());
}

void MapLayoutTest::trailKeepsTheLastPositionsOldestFirst()
{
    CarTrails trails;
    for (int s = 0; s < CarTrails::kPoints + 10; ++s)
        trails.record({{3, QPointF(s * 10.0, 0), 90, taxicore::CarState::OnTrip}}, s * CarTrails::kSampleMs);
    const auto trail = trails.trailOf(3);
    QCOMPARE(int(trail.size()), CarTrails::kPoints);
    QCOMPARE(trail.front(), QPointF(10 * 10.0, 0)); // the first ten dropped
    QCOMPARE(trail.back(), QPointF((CarTrails::kPoints + 9) * 10.0, 0));
    QVERIFY(trails.trailOf(4).empty());
    QVERIFY(trails.trailOf(0).empty());
}

void MapLayoutTest::trailSamplesOncePerInterval()
{
    CarTrails trails;
    for (int frame = 0; frame < 300; ++frame) // five seconds at 60 Hz
        trails.record({{1, QPointF(frame, 0), 90, taxicore::CarState::OnTrip}}, frame * 1000 / 60);
    QCOMPARE(trails.trailOf(1).size(), size_t(5));
}

void MapLayoutTest::aJumpStartsANewTrail()
{
    CarTrails trails;
    for (int s = 0; s < 5; ++s)
        trails.record({{1, QPointF(s * 10.0, 0), 90, taxicore::CarState::OnTrip}}, s * CarTrails::kSampleMs);
    trails.record({{1, QPointF(9000, 9000), 90, taxicore::CarState::OnTrip}}, 5 * CarTrails::kSampleMs);
    QCOMPARE(trails.trailOf(1), std::vector<QPointF>{QPointF(9000, 9000)});
    // A car missing from a record loses its trail too (its ring would have a gap).
    trails.record({{2, QPointF(0, 0), 0, taxicore::CarState::Available}}, 6 * CarTrails::kSampleMs);
    QVERIFY(trails.trailOf(1).empty());
}

QTEST_GUILESS_MAIN(MapLayoutTest)
#include "console_map_layout_test.moc"
