#pragma once

#include <QMatrix4x4>
#include <QPointF>
#include <QSizeF>

// What part of the map (in projected metres) the item shows: a centre and a scale.
// Pure arithmetic so that pan and zoom-towards-the-cursor are testable without a window.
class MapViewport {
public:
    static constexpr double kMinScale = 0.005; // px per metre: the whole region and more
    static constexpr double kMaxScale = 8.0;   // px per metre: a street corner

    void setSize(QSizeF size) { m_size = size; }
    QSizeF size() const { return m_size; }
    QPointF centre() const { return m_centre; }
    double scale() const { return m_scale; }

    // Shows the rectangle [topLeft, bottomRight] (metres) whole, centred.
    void fit(QPointF topLeft, QPointF bottomRight);
    void panBy(QPointF screenDelta);
    // Zooms by `factor`, keeping the map point under `screenPos` where it is.
    void zoomAt(QPointF screenPos, double factor);

    QPointF toScreen(QPointF metres) const
    {
        return {(metres.x() - m_centre.x()) * m_scale + m_size.width() / 2,
                (metres.y() - m_centre.y()) * m_scale + m_size.height() / 2};
    }
    QPointF toMetres(QPointF screen) const;
    // The same mapping as toScreen, for a transform node.
    QMatrix4x4 matrix() const;

private:
    QSizeF m_size{1, 1};
    QPointF m_centre;
    double m_scale = 0.05;
};
