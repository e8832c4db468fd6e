#include "StrokeGeometry.h"

#include <QSGGeometryNode>
#include <algorithm>
#include <cmath>
#include <numbers>

namespace StrokeGeometry {

namespace {
void push(Vertices &out, QPointF p, QColor c)
{
    // QSGVertexColorMaterial blends premultiplied colours.
    const int a = c.alpha();
    out.emplace_back();
    out.back().set(float(p.x()), float(p.y()), uchar(c.red() * a / 255), uchar(c.green() * a / 255),
                   uchar(c.blue() * a / 255), uchar(a));
}

QPointF onCircle(QPointF centre, double radius, int i, int sides)
{
    const double a = 2 * std::numbers::pi * i / sides;
    return centre + QPointF(std::cos(a), std::sin(a)) * radius;
}
} // namespace

void appendSegment(Vertices &out, QPointF a, QPointF b, double halfWidth, QColor colour)
{
    QPointF d = b - a;
    const double len = std::hypot(d.x(), d.y());
    if (len <= 0)
        return;
    d /= len;
    const QPointF along = d * halfWidth;
    const QPointF across(-d.y() * halfWidth, d.x() * halfWidth);
    const QPointF p[4] = {a - along + across, a - along - across, b + along + across, b + along - across};
    for (int i : {0, 1, 2, 2, 1, 3})
        push(out, p[i], colour);
}

void appendQuad(Vertices &out, QPointF a, QPointF b, QPointF c, QPointF d, QColor colour)
{
    for (const QPointF p : {a, b, c, c, b, d})
        push(out, p, colour);
}

void appendDisc(Vertices &out, QPointF centre, double radius, QColor colour, int sides)
{
    for (int i = 0; i < sides; ++i) {
        push(out, centre, colour);
        push(out, onCircle(centre, radius, i, sides), colour);
        push(out, onCircle(centre, radius, i + 1, sides), colour);
    }
}

void appendRing(Vertices &out, QPointF centre, double radius, double thickness, QColor colour, int sides)
{
    const double inner = std::max(0.0, radius - thickness);
    for (int i = 0; i < sides; ++i) {
        const QPointF o0 = onCircle(centre, radius, i, sides), o1 = onCircle(centre, radius, i + 1, sides);
        const QPointF i0 = onCircle(centre, inner, i, sides), i1 = onCircle(centre, inner, i + 1, sides);
        for (QPointF p : {o0, i0, o1, o1, i0, i1})
            push(out, p, colour);
    }
}

void upload(QSGGeometryNode *node, const Vertices &vertices)
{
    QSGGeometry *g = node->geometry();
    g->allocate(int(vertices.size()));
    std::copy(vertices.begin(), vertices.end(), g->vertexDataAsColoredPoint2D());
    node->markDirty(QSGNode::DirtyGeometry);
}

} // namespace StrokeGeometry
