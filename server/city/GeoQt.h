#pragma once
// Conversions between the plain geo structs of the hot paths and Qt Positioning's vocabulary
// (QGeoCoordinate, QGeoRectangle, QGeoPath) used at API edges and in QML.

#include "city/Geo.h"

#include <QGeoCoordinate>
#include <QGeoPath>
#include <QGeoRectangle>
#include <vector>

namespace taxicore::city {

inline QGeoCoordinate toQGeoCoordinate(GeoPoint p)
{
    return QGeoCoordinate(p.lat, p.lng);
}

inline GeoPoint fromQGeoCoordinate(const QGeoCoordinate &c)
{
    return {c.latitude(), c.longitude()};
}

inline QGeoRectangle toQGeoRectangle(GeoBounds b)
{
    return QGeoRectangle(QGeoCoordinate(b.max.lat, b.min.lng), QGeoCoordinate(b.min.lat, b.max.lng));
}

inline QGeoPath toQGeoPath(const std::vector<GeoPoint> &points)
{
    QList<QGeoCoordinate> path;
    path.reserve(qsizetype(points.size()));
    for (const GeoPoint p : points)
        path.append(toQGeoCoordinate(p));
    return QGeoPath(path);
}

} // namespace taxicore::city
