#include "StreetsItem.h"

#include "CityMapItem.h"
#include "CityRoads.h"
#include "RoadLayer.h"

#include <QElapsedTimer>
#include <QLoggingCategory>
#include <QSGTransformNode>
#include <cmath>

namespace {
// QT_LOGGING_RULES="taxicore.map.debug=true" shows how long the streets took to prepare.
Q_LOGGING_CATEGORY(lcMap, "taxicore.map", QtInfoMsg)
} // namespace

StreetsItem::StreetsItem(QQuickItem *parent)
    : QQuickItem(parent)
{
    setFlag(ItemHasContents);
    connect(this, &StreetsItem::styleChanged, this, [this] {
        m_dirty = true;
        update();
    });
}

StreetsItem::~StreetsItem() = default;

CityMapItem *StreetsItem::map() const
{
    return m_map;
}

void StreetsItem::setMap(CityMapItem *map)
{
    if (m_map == map)
        return;
    if (m_map)
        disconnect(m_map, nullptr, this, nullptr);
    m_map = map;
    if (m_map) {
        connect(m_map, &CityMapItem::viewChanged, this, &QQuickItem::update);
        connect(m_map, &CityMapItem::cityChanged, this, &StreetsItem::loadStreets);
    }
    loadStreets();
    Q_EMIT mapChanged();
}

void StreetsItem::loadStreets()
{
    const auto city = m_map ? m_map->city() : nullptr;
    if (city && city.get() == m_strokesOf)
        return;
    m_strokesOf = city.get();
    QElapsedTimer clock;
    clock.start();
    const MapProjection projection = m_map ? m_map->projection() : MapProjection();
    m_strokes = city ? CityRoads::streets(*city, projection) : CityRoads::graticule(projection);
    qCDebug(lcMap, "%zu road strokes prepared in %lld ms", m_strokes.size(), qlonglong(clock.elapsed()));
    m_dirty = true;
    Q_EMIT strokesChanged();
    update();
}

int StreetsItem::zoomBand() const
{
    // Half-octave bands: strokes are rebuilt at most every √2 of zoom.
    return m_map ? int(std::floor(std::log2(m_map->viewport().scale()) * 2)) : 0;
}

QSGNode *StreetsItem::updatePaintNode(QSGNode *oldNode, UpdatePaintNodeData *)
{
    // Render thread, GUI thread blocked: reading the map's viewport is safe.
    auto *transform = static_cast<QSGTransformNode *>(oldNode);
    if (!transform) {
        transform = new QSGTransformNode;
        transform->appendChildNode(new RoadLayer);
    }
    if (!m_map)
        return transform;
    auto *roads = static_cast<RoadLayer *>(transform->firstChild());
    const int band = zoomBand();
    if (m_dirty || band != m_builtBand) {
        const RoadLayer::Palette palette{m_gridColor,      m_majorRoadColor.darker(140),  m_majorRoadColor,
                                         m_minorRoadColor, m_majorRoadColor.lighter(105), m_minorRoadColor};
        roads->rebuild(m_strokes, palette, std::exp2(band / 2.0));
        m_dirty = false;
        m_builtBand = band;
    }
    transform->setMatrix(m_map->viewport().matrix());
    return transform;
}
