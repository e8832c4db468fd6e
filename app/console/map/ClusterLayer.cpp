#include "ClusterLayer.h"

#include "StrokeGeometry.h"

#include <QFont>
#include <QFontMetricsF>
#include <QImage>
#include <QPainter>
#include <QQuickWindow>
#include <QSGGeometryNode>
#include <QSGTexture>
#include <QSGTextureMaterial>
#include <QSGVertexColorMaterial>
#include <cmath>
#include <numbers>

namespace {
// Every character countLabel() can produce.
const QString kGlyphs = QStringLiteral("0123456789.k");
constexpr int kFontPx = 11;
constexpr double kRingPx = 3;
// Circles are polygons whose edges stray at most this far from the true circle: below half a
// pixel the difference does not show, and every triangle saved counts under a software
// rasteriser (a hundred circles at 60 frames a second).
constexpr double kMaxSagittaPx = 0.5;
// The ring's state order, clockwise from 12 o'clock: free, busy, then offline.
constexpr std::array<size_t, 5> kRingOrder{1, 2, 4, 3, 0};

// The sides of a whole circle of `radius` px drawn as a polygon.
int circleSides(double radius)
{
    const double step = 2 * std::acos(std::max(0.0, 1 - kMaxSagittaPx / std::max(radius, kMaxSagittaPx)));
    return std::max(8, int(std::ceil(2 * std::numbers::pi / step)));
}

void appendArc(StrokeGeometry::Vertices &out, QPointF centre, double radius, double thickness, double from, double to,
               QColor colour)
{
    const int sides = std::max(1, int(std::ceil((to - from) * circleSides(radius))));
    const double inner = radius - thickness;
    for (int i = 0; i < sides; ++i) {
        const double a0 = 2 * std::numbers::pi * (from + (to - from) * i / sides) - std::numbers::pi / 2;
        const double a1 = 2 * std::numbers::pi * (from + (to - from) * (i + 1) / sides) - std::numbers::pi / 2;
        const QPointF d0(std::cos(a0), std::sin(a0)), d1(std::cos(a1), std::sin(a1));
        StrokeGeometry::appendQuad(out, centre + d0 * radius, centre + d0 * inner, centre + d1 * radius,
                                   centre + d1 * inner, colour);
    }
}
} // namespace

ClusterLayer::ClusterLayer()
    : m_shapes(new QSGGeometryNode)
    , m_labels(new QSGGeometryNode)
{
    auto *shapes = new QSGGeometry(QSGGeometry::defaultAttributes_ColoredPoint2D(), 0);
    shapes->setDrawingMode(QSGGeometry::DrawTriangles);
    shapes->setVertexDataPattern(QSGGeometry::StreamPattern);
    m_shapes->setGeometry(shapes);
    m_shapes->setFlag(OwnsGeometry);
    m_shapes->setMaterial(new QSGVertexColorMaterial);
    m_shapes->setFlag(OwnsMaterial);
    appendChildNode(m_shapes);

    auto *labels = new QSGGeometry(QSGGeometry::defaultAttributes_TexturedPoint2D(), 0);
    labels->setDrawingMode(QSGGeometry::DrawTriangles);
    labels->setVertexDataPattern(QSGGeometry::StreamPattern);
    m_labels->setGeometry(labels);
    m_labels->setFlag(OwnsGeometry);
    auto *material = new QSGTextureMaterial;
    material->setFiltering(QSGTexture::Linear);
    m_labels->setMaterial(material);
    m_labels->setFlag(OwnsMaterial);
    appendChildNode(m_labels);
}

ClusterLayer::~ClusterLayer() = default;

void ClusterLayer::makeGlyphs(QQuickWindow *window, QColor colour)
{
    // Drawn at the window's pixel density so the digits stay sharp on high-DPI screens.
    const double dpr = window->effectiveDevicePixelRatio();
    QFont font;
    font.setPixelSize(kFontPx);
    font.setBold(true);
    const QFontMetricsF metrics(font);
    const double cellH = std::ceil(metrics.height()) + 2;
    double width = 0;
    for (const QChar c : kGlyphs)
        width += std::ceil(metrics.horizontalAdvance(c)) + 2;
    QImage image(QSize(int(std::ceil(width * dpr)), int(std::ceil(cellH * dpr))), QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(dpr);
    image.fill(Qt::transparent);
    QPainter painter(&image);
    painter.setFont(font);
    painter.setPen(colour);
    m_glyphRects.clear();
    m_glyphSizes.clear();
    double x = 0;
    for (const QChar c : kGlyphs) {
        const double w = std::ceil(metrics.horizontalAdvance(c)) + 2;
        painter.drawText(QPointF(x + 1, 1 + metrics.ascent()), QString(c));
        m_glyphRects.insert(c, QRectF(x / width, 0, w / width, 1));
        m_glyphSizes.insert(c, QSizeF(w, cellH));
        x += w;
    }
    painter.end();
    m_glyphTexture.reset(window->createTextureFromImage(image));
    m_glyphColour = colour;
    static_cast<QSGTextureMaterial *>(m_labels->material())->setTexture(m_glyphTexture.get());
    m_labels->markDirty(DirtyMaterial);
}

void ClusterLayer::update(const std::vector<CarCluster> &clusters, const Style &style, QQuickWindow *window)
{
    if (window && (!m_glyphTexture || m_glyphColour != style.text))
        makeGlyphs(window, style.text);

    StrokeGeometry::Vertices shapes;
    std::vector<QSGGeometry::TexturedPoint2D> glyphs;
    for (const CarCluster &c : clusters) {
        if (c.count < 2)
            continue;
        StrokeGeometry::appendDisc(shapes, c.screen, c.radius, style.fill, circleSides(c.radius));
        double from = 0;
        for (const size_t state : kRingOrder) {
            if (c.byState[state] == 0)
                continue;
            const double to = from + double(c.byState[state]) / c.count;
            appendArc(shapes, c.screen, c.radius, kRingPx, from, to, style.states[state]);
            from = to;
        }
        if (!m_glyphTexture)
            continue;
        const QString label = CarClusters::countLabel(c.count);
        double width = -2.0 * double(label.size() - 1); // neighbours overlap by their padding
        for (const QChar ch : label)
            width += m_glyphSizes.value(ch).width();
        // Glyph boxes carry 1 px of padding each side; whole pixels keep the digits crisp.
        double x = std::round(c.screen.x() - width / 2);
        for (const QChar ch : label) {
            const QRectF t = m_glyphRects.value(ch);
            const QSizeF s = m_glyphSizes.value(ch);
            const double y = std::round(c.screen.y() - s.height() / 2);
            const QPointF p[4] = {{x, y}, {x + s.width(), y}, {x, y + s.height()}, {x + s.width(), y + s.height()}};
            const QPointF uv[4] = {t.topLeft(), t.topRight(), t.bottomLeft(), t.bottomRight()};
            for (int i : {0, 1, 2, 2, 1, 3}) {
                glyphs.emplace_back();
                glyphs.back().set(float(p[i].x()), float(p[i].y()), float(uv[i].x()), float(uv[i].y()));
            }
            x += s.width() - 2;
        }
    }
    StrokeGeometry::upload(m_shapes, shapes);
    QSGGeometry *g = m_labels->geometry();
    g->allocate(int(glyphs.size()));
    std::copy(glyphs.begin(), glyphs.end(), g->vertexDataAsTexturedPoint2D());
    m_labels->markDirty(DirtyGeometry);
}
