#pragma once
// Turns the result of a search (which way the route leaves the start segment, the road arcs in
// between, which way it enters the end segment) into a polyline and a distance.

#include "city/CityData.h"
#include "city/CityTypes.h"

#include <vector>

namespace taxicore::city {

enum class Along : uint8_t { Forward, Backward }; // travel direction on a segment

class RouteAssembler {
public:
    explicit RouteAssembler(const CityData &data)
        : m_data(data)
    {
    }

    // A route that leaves `from` in direction `leave`, follows `segmentRefs`, and reaches `to`
    // travelling in direction `enter` on its segment.
    Route assemble(const RoadPoint &from, Along leave, const std::vector<uint32_t> &segmentRefs, const RoadPoint &to,
                   Along enter, double durationMs) const;

    // A route that stays on one segment.
    Route assembleWithinSegment(const RoadPoint &from, const RoadPoint &to, double durationMs) const;

private:
    void appendShape(uint32_t segmentRef, std::vector<GeoPoint> &polyline) const;
    void append(GeoPoint point, std::vector<GeoPoint> &polyline) const;

    const CityData &m_data;
};

} // namespace taxicore::city
