#include "MapViewport.h"

#include <algorithm>

void MapViewport::fit(QPointF topLeft, QPointF bottomRight)
{
    m_centre = (topLeft + bottomRight) / 2;
    const double w = std::max(1.0, bottomRight.x() - topLeft.x());
    const double h = std::max(1.0, bottomRight.y() - topLeft.y());
    m_scale = std::clamp(std::min(m_size.width() / w, m_size.height() / h), kMinScale, kMaxScale);
}

void MapViewport::panBy(QPointF screenDelta)
{
    m_centre -= screenDelta / m_scale;
}

void MapViewport::zoomAt(QPointF screenPos, double factor)
{
    const QPointF anchor = toMetres(screenPos);
    m_scale = std::clamp(m_scale * factor, kMinScale, kMaxScale);
    // Move the centre so that `anchor` projects back onto screenPos.
    const QPointF offset = screenPos - QPointF(m_size.width() / 2, m_size.height() / 2);
    m_centre = anchor - offset / m_scale;
}

QPointF MapViewport::toMetres(QPointF screen) const
{
    return {(screen.x() - m_size.width() / 2) / m_scale + m_centre.x(),
            (screen.y() - m_size.height() / 2) / m_scale + m_centre.y()};
}

QMatrix4x4 MapViewport::matrix() const
{
    QMatrix4x4 m;
    m.translate(float(m_size.width() / 2), float(m_size.height() / 2));
    m.scale(float(m_scale), float(m_scale));
    m.translate(float(-m_centre.x()), float(-m_centre.y()));
    return m;
}
