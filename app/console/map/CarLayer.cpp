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

void CarLayer::update(const std::vector<CarMarker> &cars, const MapViewport &viewport, const Palette &palette,
                      QColor halo)
{
    const QSizeF size = viewport.size();
    const double margin = kLengthPx;
    const double length = kLengthPx, width = kWidthPx;
    // Premultiplied, as QSGVertexColorMaterial blends.
    const int haloAlpha = halo.alpha();
    const auto hr = uchar(halo.red() * haloAlpha / 255), hg = uchar(halo.green() * haloAlpha / 255),
               hb = uchar(halo.blue() * haloAlpha / 255), ha = uchar(haloAlpha);

    QSGGeometry *g = geometry();
    // Count the visible cars first: allocate() discards what was written before it.
    int visible = 0;
    for (const auto &car : cars) {
        const QPointF p = viewport.toScreen(car.metres);
        visible +=
            p.x() > -margin && p.y() > -margin && p.x() < size.width() + margin && p.y() < size.height() + margin;
    }
    if (g->vertexCount() != visible * 6)
        g->allocate(visible * 6);

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
        // The halo: the same arrow grown by kHaloPx, so markers stand out from the streets.
        const QPointF centroid = (tip + left + right) / 3;
        for (const QPointF corner : {tip, left, right}) {
            const QPointF out = corner - centroid;
            const double len = std::hypot(out.x(), out.y());
            const QPointF grown = corner + out / len * (kHaloPx * 2);
            (v++)->set(float(grown.x()), float(grown.y()), hr, hg, hb, ha);
        }
        (v++)->set(float(tip.x()), float(tip.y()), r, gr, b, a);
        (v++)->set(float(left.x()), float(left.y()), r, gr, b, a);
        (v++)->set(float(right.x()), float(right.y()), r, gr, b, a);
    }
    markDirty(DirtyGeometry);
}
