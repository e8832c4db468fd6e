#pragma once

#include <QObject>
#include <QPointer>
#include <QQuickItem>
#include <qqmlregistration.h>

#include "CityMapItem.h"

// Brings a place into view on the city map: an alert's booking or car, one click away. Works on
// CityMap.qml (or the CityMapItem inside it) through the map's own pan and zoom.
class MapFocus : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QQuickItem *map READ map WRITE setMap NOTIFY mapChanged)
    // The CityMapItem of `map` (QML connects to its clicked signal for manual dispatch).
    Q_PROPERTY(CityMapItem *cityMap READ cityMap NOTIFY mapChanged)

public:
    // Centring also zooms in to at least this many pixels per metre (a few blocks across).
    static constexpr double kFocusScale = 0.5;

    explicit MapFocus(QObject *parent = nullptr);

    QQuickItem *map() const { return m_map; }
    void setMap(QQuickItem *map);
    CityMapItem *cityMap() const { return cityMapOf(m_map); }

    // Centres the map on (lat, lng); false without a map.
    Q_INVOKABLE bool centreOn(double lat, double lng);
    // Where (lat, lng) is drawn now, in the map's coordinates.
    Q_INVOKABLE QPointF pointOf(double lat, double lng) const;

    // The CityMapItem `item` is or holds; null if none.
    static CityMapItem *cityMapOf(QQuickItem *item);

Q_SIGNALS:
    void mapChanged();

private:
    QPointer<QQuickItem> m_map;
};
