#pragma once
// The drivable road network as the importer builds it, before it is written to a city file.

#include "city/CityFormat.h"
#include "city/RoadClass.h"

#include <string>
#include <vector>

namespace taxicore::city {

struct RoadSegment {
    uint32_t from = 0;
    uint32_t to = 0;
    uint32_t nameIndex = format::kNoName;
    double lengthM = 0;
    uint32_t forwardMs = format::kNotAllowed;
    uint32_t backwardMs = format::kNotAllowed;
    RoadClass roadClass = RoadClass::Road;
    double speedKmh = 0;
    std::vector<format::Coord> shape; // from node ... to node
};

struct RoadGraph {
    std::vector<format::Coord> nodes;
    std::vector<RoadSegment> segments;
    std::vector<std::string> names;
};

struct RoadGraphStats {
    size_t waysRead = 0;
    size_t waysDrivable = 0;
    size_t nodesBeforeComponentFilter = 0;
    size_t segmentsBeforeComponentFilter = 0;
};

} // namespace taxicore::city
