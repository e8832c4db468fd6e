#pragma once
// Value types of the public city API (see City.h).

#include "city/Geo.h"
#include "city/RoadClass.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace taxicore::city {

// A position on the road network: where a coordinate snapped to.
struct RoadPoint {
    bool valid = false;
    GeoPoint point;       // on the road
    uint32_t segment = 0; // index into CityData::segments
    uint32_t piece = 0;   // straight piece of the segment's shape holding the point
    double offsetM = 0;   // distance along the segment from its `from` node
    double distanceM = 0; // from the snapped coordinate to `point`
};

struct Route {
    bool found = false;
    std::vector<GeoPoint> polyline; // from the snapped start to the snapped end
    double distanceM = 0;
    double durationS = 0;
};

struct RoadPolyline {
    RoadClass roadClass = RoadClass::Road;
    std::vector<GeoPoint> points;
};

// etaTo() result for a source that cannot reach the target within maxSeconds.
inline constexpr double kUnreachable = std::numeric_limits<double>::infinity();

} // namespace taxicore::city
