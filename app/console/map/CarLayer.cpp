#include "CarLayer.h"

#include "MapViewport.h"

#include <QSGVertexColorMaterial>
#include <algorithm>
#include <cmath>
#include <numbers>

CarLayer::CarLayer()
{
    auto *geometry = new QSGGeometry(QSGGeometry::defaultAttributes_ColoredPoint2D(), 0);
    geometry->setDrawingMode(QSGGeometry::DrawTriangles);
    geometry->setVertexDataPattern(QSGGeometry::StreamPattern);
    setGeometry(geometry);
    setFlag(OwnsGeometry);
    setMaterial(new QSGVertexColorMaterial);
    setFlag(OwnsMaterial);
}

void CarLayer::update(const std::vector<CarMarker> &cars, const MapViewport &viewport, const Palette &palette)
{
    const QSizeF size = viewport.size();
    const double margin = kLengthPx;
    // Smaller arrows when zoomed out, so that a dense fleet does not become one blot.
    const double shrink = std::clamp(viewport.scale() / kFullSizeScale, kMinSizeFactor, 1.0);
    const double length = kLengthPx * shrink, width = kWidthPx * shrink;

    QSGGeometry *g = geometry();
    // Count the visible cars first: allocate() discards what was written before it.
    int visible = 0;
    for (const auto &car : cars) {
        const QPointF p = viewport.toScreen(car.metres);
        visible +=
            p.x() > -margin && p.y() > -margin && p.x() < size.width() + margin && p.y() < size.height() + margin;
    }
    if (g->vertexCount() != visible * 3)
        g->allocate(visible * 3);

    auto *v = g->vertexDataAsColoredPoint2D();
    for (const auto &car : cars) {
        const QPointF p = viewport.toScreen(car.metres);
        if (!(p.x() > -margin && p.y() > -margin && p.x() < size.width() + margin && p.y() < size.height() + margin))
            continue;
        const double rad = double(car.heading) * std::numbers::pi / 180.0;
        const QPointF dir(std::sin(rad), -std::cos(rad)); // screen y grows southwards
        const QPointF across(-dir.y(), dir.x());
        const QPointF tip = p + dir * (length * 0.6);
        const QPointF back = p - dir * (length * 0.4);
        const QPointF left = back + across * (width / 2);
        const QPointF right = back - across * (width / 2);
        const QColor &c = palette[size_t(car.state) < palette.size() ? size_t(car.state) : 0];
        const auto r = uchar(c.red()), gr = uchar(c.green()), b = uchar(c.blue()), a = uchar(c.alpha());
        (v++)->set(float(tip.x()), float(tip.y()), r, gr, b, a);
        (v++)->set(float(left.x()), float(left.y()), r, gr, b, a);
        (v++)->set(float(right.x()), float(right.y()), r, gr, b, a);
    }
    markDirty(DirtyGeometry);
}
