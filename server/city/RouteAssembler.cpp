#include "city/RouteAssembler.h"

#include <cmath>

namespace taxicore::city {

void RouteAssembler::append(GeoPoint point, std::vector<GeoPoint> &polyline) const
{
    if (polyline.empty() || polyline.back().lat != point.lat || polyline.back().lng != point.lng)
        polyline.push_back(point);
}

void RouteAssembler::appendShape(uint32_t segmentRef, std::vector<GeoPoint> &polyline) const
{
    const std::span<const format::Coord> shape = m_data.shape(segmentRef >> 1);
    if ((segmentRef & 1) == 0) {
        for (const format::Coord c : shape)
            append(CityData::geo(c), polyline);
    } else {
        for (auto it = shape.rbegin(); it != shape.rend(); ++it)
            append(CityData::geo(*it), polyline);
    }
}

Route RouteAssembler::assemble(const RoadPoint &from, Along leave, const std::vector<uint32_t> &segmentRefs,
                               const RoadPoint &to, Along enter, double durationMs) const
{
    Route route;
    route.found = true;
    route.durationS = durationMs / 1000.0;
    std::vector<GeoPoint> &line = route.polyline;
    line.reserve(2 * segmentRefs.size() + 16); // about two shape points per segment

    const std::span<const format::Coord> start = m_data.shape(from.segment);
    const double startLength = m_data.segments[from.segment].lengthM;
    append(from.point, line);
    if (leave == Along::Forward) {
        for (size_t i = from.piece + 1; i < start.size(); ++i)
            append(CityData::geo(start[i]), line);
        route.distanceM += startLength - from.offsetM;
    } else {
        for (size_t i = from.piece + 1; i-- > 0;)
            append(CityData::geo(start[i]), line);
        route.distanceM += from.offsetM;
    }

    for (const uint32_t ref : segmentRefs) {
        appendShape(ref, line);
        route.distanceM += m_data.segments[ref >> 1].lengthM;
    }

    const std::span<const format::Coord> end = m_data.shape(to.segment);
    const double endLength = m_data.segments[to.segment].lengthM;
    if (enter == Along::Forward) {
        for (size_t i = 0; i <= to.piece; ++i)
            append(CityData::geo(end[i]), line);
        route.distanceM += to.offsetM;
    } else {
        for (size_t i = end.size(); i-- > to.piece + 1;)
            append(CityData::geo(end[i]), line);
        route.distanceM += endLength - to.offsetM;
    }
    append(to.point, line);
    return route;
}

Route RouteAssembler::assembleWithinSegment(const RoadPoint &from, const RoadPoint &to, double durationMs) const
{
    Route route;
    route.found = true;
    route.durationS = durationMs / 1000.0;
    route.distanceM = std::abs(to.offsetM - from.offsetM);
    const std::span<const format::Coord> shape = m_data.shape(from.segment);
    append(from.point, route.polyline);
    if (to.offsetM >= from.offsetM) {
        for (size_t i = from.piece + 1; i <= to.piece; ++i)
            append(CityData::geo(shape[i]), route.polyline);
    } else {
        for (size_t i = from.piece; i > to.piece; --i)
            append(CityData::geo(shape[i]), route.polyline);
    }
    append(to.point, route.polyline);
    return route;
}

} // namespace taxicore::city
