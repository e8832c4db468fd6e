#pragma once
// Snaps a coordinate to the nearest point of any road, searching the spatial grid ring by ring
// outwards from the coordinate's cell until no closer piece can exist.

#include "city/CityData.h"
#include "city/CityTypes.h"

namespace taxicore::city {

class Snapper {
public:
    explicit Snapper(const CityData &data);

    RoadPoint snap(GeoPoint point) const;

    // The point `offsetM` metres along a segment from its `from` node (clamped to the segment).
    RoadPoint pointAlong(uint32_t segment, double offsetM) const;

private:
    const CityData &m_data;
    LocalProjection m_projection;
    double m_cellMeters = 0; // the smaller side of a grid cell
};

} // namespace taxicore::city
