#include "RoadLayer.h"

#include "StrokeGeometry.h"

#include <QSGVertexColorMaterial>
#include <algorithm>
#include <cmath>

namespace {
QColor colourOf(RoadStroke::Kind kind, const RoadLayer::Palette &palette)
{
    switch (kind) {
    case RoadStroke::Kind::Grid:
        return palette.grid;
    case RoadStroke::Kind::Boundary:
        return palette.boundary;
    case RoadStroke::Kind::Major:
        return palette.major;
    case RoadStroke::Kind::Minor:
        return palette.minor;
    case RoadStroke::Kind::Link:
        return palette.link;
    case RoadStroke::Kind::Service:
        return palette.service;
    }
    return palette.minor;
}

// Lower kinds first, so that major roads are drawn over minor ones (the node has no depth).
int drawOrder(RoadStroke::Kind kind)
{
    switch (kind) {
    case RoadStroke::Kind::Grid:
        return 0;
    case RoadStroke::Kind::Service:
        return 1;
    case RoadStroke::Kind::Minor:
        return 2;
    case RoadStroke::Kind::Link:
        return 3;
    case RoadStroke::Kind::Major:
        return 4;
    case RoadStroke::Kind::Boundary:
        return 5;
    }
    return 0;
}
} // namespace

namespace {
QSGGeometryNode *makeChunk()
{
    auto *node = new QSGGeometryNode;
    auto *geometry = new QSGGeometry(QSGGeometry::defaultAttributes_ColoredPoint2D(), 0);
    geometry->setDrawingMode(QSGGeometry::DrawTriangles);
    geometry->setVertexDataPattern(QSGGeometry::StaticPattern);
    node->setGeometry(geometry);
    node->setFlag(QSGNode::OwnsGeometry);
    node->setMaterial(new QSGVertexColorMaterial);
    node->setFlag(QSGNode::OwnsMaterial);
    return node;
}
} // namespace

double RoadLayer::widthM(RoadStroke::Kind kind)
{
    switch (kind) {
    case RoadStroke::Kind::Grid:
        return 0; // always the minimum: a hairline
    case RoadStroke::Kind::Boundary:
        return 0;
    case RoadStroke::Kind::Major:
        return 14;
    case RoadStroke::Kind::Link:
        return 9;
    case RoadStroke::Kind::Minor:
        return 8;
    case RoadStroke::Kind::Service:
        return 5;
    }
    return 6;
}

double RoadLayer::minWidthPx(RoadStroke::Kind kind)
{
    switch (kind) {
    case RoadStroke::Kind::Grid:
        return 1;
    case RoadStroke::Kind::Boundary:
        return 1.5;
    case RoadStroke::Kind::Major:
        return 2.6;
    case RoadStroke::Kind::Link:
        return 1.8;
    case RoadStroke::Kind::Minor:
        return 1.5;
    case RoadStroke::Kind::Service:
        return 1.1;
    }
    return 1;
}

void RoadLayer::rebuild(const std::vector<RoadStroke> &strokes, const Palette &palette, double scale)
{
    std::vector<const RoadStroke *> ordered;
    ordered.reserve(strokes.size());
    int segments = 0;
    for (const auto &s : strokes) {
        if (s.points.size() < 2)
            continue;
        ordered.push_back(&s);
        segments += int(s.points.size()) - 1;
    }
    std::stable_sort(ordered.begin(), ordered.end(),
                     [](const RoadStroke *a, const RoadStroke *b) { return drawOrder(a->kind) < drawOrder(b->kind); });

    StrokeGeometry::Vertices out;
    out.reserve(size_t(segments) * 6);
    for (const RoadStroke *s : ordered) {
        const double half = std::max(widthM(s->kind), minWidthPx(s->kind) / scale) / 2;
        const QColor colour = colourOf(s->kind, palette);
        for (size_t i = 1; i < s->points.size(); ++i)
            StrokeGeometry::appendSegment(out, s->points[i - 1], s->points[i], half, colour);
    }
    // A rebuild per zoom band: simpler than reusing chunks.
    while (QSGNode *old = firstChild()) {
        removeChildNode(old);
        delete old;
    }
    for (size_t first = 0; first < out.size(); first += kMaxVertices) {
        const size_t last = std::min(out.size(), first + kMaxVertices);
        QSGGeometryNode *chunk = makeChunk();
        StrokeGeometry::upload(
            chunk, StrokeGeometry::Vertices(out.begin() + std::ptrdiff_t(first), out.begin() + std::ptrdiff_t(last)));
        appendChildNode(chunk);
    }
}
