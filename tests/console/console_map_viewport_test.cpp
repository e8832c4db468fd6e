// Pan and zoom arithmetic of the map, without a window.
#include "MapProjection.h"
#include "MapViewport.h"

#include <QTest>

class MapViewportTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void zoomKeepsThePointUnderTheCursor();
    void panMovesTheMapWithThePointer();
    void zoomIsClamped();
    void fitShowsTheWholeRectangle();
    void projectionRoundTrips();
};

void MapViewportTest::zoomKeepsThePointUnderTheCursor()
{
    MapViewport view;
    view.setSize({800, 600});
    const QPointF cursor(123, 456);
    const QPointF before = view.toMetres(cursor);
    view.zoomAt(cursor, 2.5);
    const QPointF after = view.toMetres(cursor);
    QVERIFY(qAbs(before.x() - after.x()) < 1e-6);
    QVERIFY(qAbs(before.y() - after.y()) < 1e-6);
    QCOMPARE(view.scale(), 0.05 * 2.5);
}

void MapViewportTest::panMovesTheMapWithThePointer()
{
    MapViewport view;
    view.setSize({800, 600});
    const QPointF point = view.toMetres({100, 100});
    view.panBy({30, -20});
    const QPointF moved = view.toScreen(point);
    QVERIFY(qAbs(moved.x() - 130) < 1e-9);
    QVERIFY(qAbs(moved.y() - 80) < 1e-9);
    // The transform node's matrix maps the same way.
    const QPointF viaMatrix = view.matrix().map(point);
    QVERIFY(qAbs(viaMatrix.x() - 130) < 1e-3);
}

void MapViewportTest::zoomIsClamped()
{
    MapViewport view;
    view.zoomAt({0, 0}, 1e9);
    QCOMPARE(view.scale(), MapViewport::kMaxScale);
    view.zoomAt({0, 0}, 1e-12);
    QCOMPARE(view.scale(), MapViewport::kMinScale);
}

void MapViewportTest::fitShowsTheWholeRectangle()
{
    MapViewport view;
    view.setSize({1000, 500});
    view.fit({-2000, -1000}, {2000, 1000});
    QCOMPARE(view.toScreen({-2000, -1000}), QPointF(0, 0));
    QCOMPARE(view.toScreen({2000, 1000}), QPointF(1000, 500));
}

void MapViewportTest::projectionRoundTrips()
{
    const MapProjection projection;
    const QPointF m = projection.toMetres(57.72, 12.01);
    QVERIFY(m.x() > 0 && m.y() < 0); // east and north of the origin
    const QPointF back = projection.toLatLng(m);
    QVERIFY(qAbs(back.y() - 57.72) < 1e-9 && qAbs(back.x() - 12.01) < 1e-9);
    // 0.01° of latitude is about 1.11 km.
    QVERIFY(qAbs(projection.toMetres(57.715, 11.975).y() + 1112) < 2);
}

QTEST_GUILESS_MAIN(MapViewportTest)
#include "console_map_viewport_test.moc"
