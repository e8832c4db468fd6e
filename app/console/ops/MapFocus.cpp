#include "MapFocus.h"

#include "CityMapItem.h"

MapFocus::MapFocus(QObject *parent)
    : QObject(parent)
{
}

void MapFocus::setMap(QQuickItem *map)
{
    if (m_map == map)
        return;
    m_map = map;
    Q_EMIT mapChanged();
}

CityMapItem *MapFocus::cityMapOf(QQuickItem *item)
{
    if (!item)
        return nullptr;
    if (auto *map = qobject_cast<CityMapItem *>(item))
        return map;
    return item->findChild<CityMapItem *>();
}

QPointF MapFocus::pointOf(double lat, double lng) const
{
    const CityMapItem *map = cityMapOf(m_map);
    if (!map)
        return {};
    const QPointF onScreen = map->viewport().toScreen(map->projection().toMetres(lat, lng));
    return map->mapToItem(m_map, onScreen);
}

bool MapFocus::centreOn(double lat, double lng)
{
    CityMapItem *map = cityMapOf(m_map);
    if (!map)
        return false;
    const QPointF middle(map->width() / 2, map->height() / 2);
    if (map->viewport().scale() < kFocusScale)
        map->zoomAt(middle.x(), middle.y(), kFocusScale / map->viewport().scale());
    const QPointF at = map->viewport().toScreen(map->projection().toMetres(lat, lng));
    map->panBy(middle.x() - at.x(), middle.y() - at.y());
    return true;
}
