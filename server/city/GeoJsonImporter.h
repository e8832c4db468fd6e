#pragma once
// Reads OpenStreetMap ways exported as GeoJSON (overpass-turbo style FeatureCollection of
// LineString/MultiLineString features; properties carry the OSM tags). Polygons are areas and
// skipped. GeoJSON has no node ids: points with identical coordinates are the same node.

#include "city/WayReadResult.h"

namespace taxicore::city {

WayReadResult readGeoJsonWays(const QString &path);

} // namespace taxicore::city
