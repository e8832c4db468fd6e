#include "SurgeHeatLayer.h"

#include "CityMapItem.h"
#include "ConsoleBackend.h"
#include "MapFocus.h"

#include "fleet/FleetStore.h"
#include "pricing/PricingBoard.h"

#include <QPainter>
#include <algorithm>

SurgeHeatLayer::SurgeHeatLayer(QQuickItem *parent)
    : QQuickPaintedItem(parent)
{
    m_timer.setInterval(kRefreshMs);
    connect(&m_timer, &QTimer::timeout, this, &SurgeHeatLayer::refresh);
    connect(this, &QQuickItem::visibleChanged, this, [this] {
        isVisible() ? m_timer.start() : m_timer.stop();
        refresh();
    });
}

ConsoleBackend *SurgeHeatLayer::backend() const
{
    return m_backend;
}

void SurgeHeatLayer::setBackend(ConsoleBackend *backend)
{
    if (m_backend == backend)
        return;
    m_backend = backend;
    m_updatedMs = -1;
    if (isVisible())
        m_timer.start();
    Q_EMIT backendChanged();
    refresh();
}

void SurgeHeatLayer::setMap(QQuickItem *map)
{
    if (m_map == map)
        return;
    if (m_cityMap)
        disconnect(m_cityMap, nullptr, this, nullptr);
    m_map = map;
    m_cityMap = MapFocus::cityMapOf(map);
    if (m_cityMap)
        connect(m_cityMap, &CityMapItem::viewChanged, this, [this] {
            if (isVisible())
                update();
        });
    Q_EMIT mapChanged();
    update();
}

void SurgeHeatLayer::refresh()
{
    taxicore::FleetStore *fleet = m_backend ? m_backend->fleet() : nullptr;
    if (!fleet || !isVisible())
        return;
    const taxicore::PricingBoard pricing(fleet->pricing());
    const int64_t updated = pricing.surgeUpdatedMs();
    if (updated == m_updatedMs)
        return;
    m_updatedMs = updated;
    m_grid = pricing.grid();
    m_cells = pricing.surgeCells();
    m_cap = std::max(1.0, pricing.tariff().surgeCap);
    m_highest = m_cells.empty() ? 1.0 : *std::max_element(m_cells.begin(), m_cells.end());
    m_surging = int(std::count_if(m_cells.begin(), m_cells.end(), [](double s) { return s > kShownAbove; }));
    Q_EMIT surgeChanged();
    update();
}

QColor SurgeHeatLayer::colourFor(double surge, double cap)
{
    if (!(surge > kShownAbove))
        return Qt::transparent;
    const double t = cap > 1 ? std::clamp((surge - 1) / (cap - 1), 0.0, 1.0) : 1.0;
    // Yellow (hue 55°) at the first step up, red (0°) at the cap; more opaque as it rises.
    return QColor::fromHsvF(float(55.0 / 360.0 * (1 - t)), 0.9f, 1.0f, float(0.18 + 0.22 * t));
}

void SurgeHeatLayer::paint(QPainter *painter)
{
    if (!m_cityMap || m_cells.size() != size_t(m_grid.cellCount()))
        return;
    const MapViewport &view = m_cityMap->viewport();
    const MapProjection &projection = m_cityMap->projection();
    const QPointF offset = m_cityMap->mapToItem(this, QPointF(0, 0));
    QFont font = painter->font();
    font.setBold(true);
    painter->setFont(font);
    painter->setPen(Qt::NoPen);
    for (int row = 0; row < m_grid.rows; ++row) {
        for (int col = 0; col < m_grid.cols; ++col) {
            const QColor colour = colourFor(m_cells[size_t(row * m_grid.cols + col)], m_cap);
            if (colour.alpha() == 0)
                continue;
            const double south = m_grid.south + row * m_grid.cellLatDeg;
            const double west = m_grid.west + col * m_grid.cellLngDeg;
            const QPointF topLeft = view.toScreen(projection.toMetres(south + m_grid.cellLatDeg, west));
            const QPointF bottomRight = view.toScreen(projection.toMetres(south, west + m_grid.cellLngDeg));
            const QRectF cell(topLeft + offset, bottomRight + offset);
            painter->fillRect(cell, colour);
            if (cell.width() >= kLabelMinCellPx) {
                // Zoomed in far enough: the multiplier itself, as a rider would be quoted it.
                QColor ink = colour;
                ink.setAlphaF(1.0f);
                painter->setPen(ink.darker(170));
                painter->drawText(cell, Qt::AlignCenter,
                                  QStringLiteral("×%1").arg(m_cells[size_t(row * m_grid.cols + col)], 0, 'f', 1));
                painter->setPen(Qt::NoPen);
            }
        }
    }
}
