#pragma once

#include <QColor>
#include <QPointF>
#include <QSGGeometry>
#include <vector>

class QSGGeometryNode;

// Triangle builders shared by the map layers (DrawTriangles, per-vertex colour).
namespace StrokeGeometry {
using Vertices = std::vector<QSGGeometry::ColoredPoint2D>;

// A segment as two triangles, with square caps so that joints of a polyline have no gaps.
void appendSegment(Vertices &out, QPointF a, QPointF b, double halfWidth, QColor colour);
// Two triangles: (a, b, c) and (c, b, d).
void appendQuad(Vertices &out, QPointF a, QPointF b, QPointF c, QPointF d, QColor colour);
// A filled regular polygon approximating a disc.
void appendDisc(Vertices &out, QPointF centre, double radius, QColor colour, int sides = 16);
// A ring (disc outline) of the given thickness.
void appendRing(Vertices &out, QPointF centre, double radius, double thickness, QColor colour, int sides = 20);
// Copies `vertices` into the node's geometry and marks it dirty.
void upload(QSGGeometryNode *node, const Vertices &vertices);
} // namespace StrokeGeometry
