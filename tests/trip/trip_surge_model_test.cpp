// Surge per zone (issue 4): the grid's cells, the formula
// clamp(1 + k·max(0, open/max(1, available) − 1), 1, cap), its exponential smoothing, and the
// fare formula max(minimum, base + per_km·km + per_min·min) × surge.

#include "pricing/SurgeModel.h"
#include "pricing/Tariff.h"
#include "city/Geo.h"

#include <QTest>
#include <cmath>

using namespace taxicore;

namespace {
// Central Gothenburg, about 12 × 14 km.
const LatLng kSouthWest{57.65, 11.86};
const LatLng kNorthEast{57.76, 12.09};
} // namespace

class SurgeModelTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void gridCellsAreAbout500Metres()
    {
        const SurgeGrid grid = SurgeGrid::covering(kSouthWest, kNorthEast, SurgeGrid::kCellM, 4096);
        QVERIFY(grid.rows >= 20 && grid.rows <= 30);
        QVERIFY(grid.cols >= 25 && grid.cols <= 32);
        const LatLng corner{grid.south, grid.west};
        QVERIFY(std::abs(city::haversineMeters(corner, {grid.south + grid.cellLatDeg, grid.west}) - 500) < 5);
        QVERIFY(std::abs(city::haversineMeters(corner, {grid.south, grid.west + grid.cellLngDeg}) - 500) < 10);
        // Every point of the box is in a cell; outside is -1.
        QCOMPARE(grid.cellOf(kSouthWest), 0);
        QVERIFY(grid.cellOf({57.7599, 12.0899}) >= 0);
        QCOMPARE(grid.cellOf({57.64, 11.95}), -1);
        QCOMPARE(grid.cellOf({57.70, 12.20}), -1);
        // Neighbours 600 m apart east-west are in neighbouring columns.
        const int a = grid.cellOf({57.70, 11.95});
        const int b = grid.cellOf({57.70, 11.95 + 600 / (111'195.0 * std::cos(57.70 * 3.141592653589793 / 180))});
        QVERIFY(b == a + 1 || b == a + 2);
    }

    void gridGrowsItsCellsToFitTheLimit()
    {
        const SurgeGrid grid = SurgeGrid::covering(kSouthWest, kNorthEast, SurgeGrid::kCellM, 100);
        QVERIFY(grid.cellCount() <= 100);
        QVERIFY(grid.cellCount() > 25);
        QVERIFY(grid.cellOf({57.7599, 12.0899}) >= 0);
    }

    void targetFollowsTheFormula()
    {
        Tariff t; // k = 0.5, cap = 2.5
        QCOMPARE(surgeTarget(0, 0, t), 1.0);
        QCOMPARE(surgeTarget(3, 5, t), 1.0);   // fewer bookings than cars
        QCOMPARE(surgeTarget(5, 5, t), 1.0);   // ratio 1: no surge yet
        QCOMPARE(surgeTarget(10, 5, t), 1.5);  // ratio 2 → 1 + 0.5·1
        QCOMPARE(surgeTarget(4, 0, t), 2.5);   // no car: ratio over max(1, 0) = 4 → 2.5
        QCOMPARE(surgeTarget(100, 1, t), 2.5); // capped
        t.surgeCap = 1.2;
        QCOMPARE(surgeTarget(10, 5, t), 1.2);
        t.surgePerExcess = 0;
        QCOMPARE(surgeTarget(100, 1, t), 1.0);
    }

    void smoothingIsExponential()
    {
        // After one time constant, 1 − 1/e of the gap is closed.
        QVERIFY(std::abs(smoothedSurge(1.0, 2.0, 30, 30) - (2.0 - std::exp(-1.0))) < 1e-9);
        QVERIFY(std::abs(smoothedSurge(2.0, 1.0, 60, 30) - (1.0 + std::exp(-2.0))) < 1e-9);
        QCOMPARE(smoothedSurge(1.0, 2.0, 0, 30), 1.0);
        QCOMPARE(smoothedSurge(1.0, 2.0, 5, 0), 2.0); // no smoothing: at once
        // Steps add up: two steps of 15 s equal one of 30 s.
        const double twice = smoothedSurge(smoothedSurge(1.0, 2.0, 15, 30), 2.0, 15, 30);
        QVERIFY(std::abs(twice - smoothedSurge(1.0, 2.0, 30, 30)) < 1e-9);
    }

    void modelCountsPerCellAndSmooths()
    {
        const SurgeGrid grid = SurgeGrid::covering(kSouthWest, kNorthEast, SurgeGrid::kCellM, 4096);
        SurgeModel model(grid);
        Tariff t; // k 0.5, cap 2.5, τ 30 s
        const LatLng busy{57.7050, 11.9700};
        const LatLng quiet{57.7200, 12.0300};
        // Busy: 6 open bookings, 2 available cars (ratio 3 → target 2.0). Quiet: 1 booking, 4 cars.
        const std::vector<LatLng> open{busy, busy, busy, busy, busy, busy, quiet};
        const std::vector<LatLng> cars{busy, busy, quiet, quiet, quiet, quiet};
        model.update(open, cars, t, 30);
        const double first = model.surgeAt(busy);
        QVERIFY2(std::abs(first - (2.0 - std::exp(-1.0))) < 1e-9, qPrintable(QString::number(first)));
        QCOMPARE(model.surgeAt(quiet), 1.0);
        QCOMPARE(model.surgeAt({57.68, 11.90}), 1.0); // an empty cell
        for (int i = 0; i < 20; ++i)
            model.update(open, cars, t, 30);
        QVERIFY(std::abs(model.surgeAt(busy) - 2.0) < 1e-6);
        // Demand gone: it decays back towards 1, not at once.
        model.update({}, cars, t, 30);
        QVERIFY(model.surgeAt(busy) > 1.3 && model.surgeAt(busy) < 1.4);
        // A lowered cap applies at once.
        for (int i = 0; i < 20; ++i)
            model.update(open, cars, t, 30);
        t.surgeCap = 1.5;
        model.update(open, cars, t, 1);
        QCOMPARE(model.surgeAt(busy), 1.5);
        // Outside the grid counts nowhere and is never surged.
        QCOMPARE(model.surgeAt({50.0, 10.0}), 1.0);
    }

    void fareFollowsTheTariff()
    {
        const Tariff t; // 45 + 13.50/km + 5.50/min, minimum 95
        const FareBreakdown f = computeFare(t, 4000, 600, 1.5);
        QCOMPARE(f.distanceCharge, 54.0);
        QCOMPARE(f.timeCharge, 55.0);
        QCOMPARE(f.total, std::round((45 + 54 + 55) * 1.5 * 100) / 100);
        const FareBreakdown shortTrip = computeFare(t, 500, 60, 2.0);
        QCOMPARE(shortTrip.total, 190.0); // the minimum, surged
    }
};

QTEST_APPLESS_MAIN(SurgeModelTest)
#include "trip_surge_model_test.moc"
