#pragma once
// Reads highway ways from OpenStreetMap .osm (XML) and .osm.pbf files through libosmium.

#include "city/WayReadResult.h"

namespace taxicore::city {

// False when the build had no libosmium: readOsmWays then always reports an error.
bool osmImportAvailable();

WayReadResult readOsmWays(const QString &path);

} // namespace taxicore::city
