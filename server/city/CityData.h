#pragma once
// Read-only views of the sections of a loaded (memory-mapped, validated) city file.

#include "city/CityFormat.h"
#include "city/Geo.h"

#include <span>
#include <string_view>

namespace taxicore::city {

struct CityData {
    const format::Header *header = nullptr;
    std::span<const format::Coord> nodes;
    std::span<const format::Segment> segments;
    std::span<const uint32_t> shapeFirst;
    std::span<const format::Coord> shapePoints;
    std::span<const uint32_t> arcFirst;
    std::span<const format::Arc> arcs;
    std::span<const uint32_t> reverseArcFirst;
    std::span<const format::Arc> reverseArcs;
    std::span<const uint32_t> upFirst;
    std::span<const format::ChArc> upArcs;
    std::span<const uint32_t> downFirst;
    std::span<const format::ChArc> downArcs;
    std::span<const uint32_t> nameFirst;
    std::span<const char> nameBytes;
    std::span<const uint32_t> gridCellFirst;
    std::span<const format::GridItem> gridItems;

    std::span<const format::Coord> shape(uint32_t segment) const
    {
        return shapePoints.subspan(shapeFirst[segment], shapeFirst[segment + 1] - shapeFirst[segment]);
    }
    std::span<const format::Arc> outgoing(uint32_t node) const
    {
        return arcs.subspan(arcFirst[node], arcFirst[node + 1] - arcFirst[node]);
    }
    std::span<const format::Arc> incoming(uint32_t node) const
    {
        return reverseArcs.subspan(reverseArcFirst[node], reverseArcFirst[node + 1] - reverseArcFirst[node]);
    }
    std::string_view name(uint32_t nameIndex) const
    {
        if (nameIndex >= nameFirst.size() - 1)
            return {};
        return {nameBytes.data() + nameFirst[nameIndex], nameFirst[nameIndex + 1] - nameFirst[nameIndex]};
    }
    static GeoPoint geo(format::Coord c) { return {fromCoordUnits(c.lat), fromCoordUnits(c.lng)}; }
};

} // namespace taxicore::city
