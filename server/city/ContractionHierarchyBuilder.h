#pragma once
// Builds a contraction hierarchy (Geisberger et al. 2008) over the road graph at import time:
// nodes are contracted one by one in order of importance; a shortcut replaces a path u-v-x
// through the contracted node v unless a bounded "witness" search finds a path at least as short.

#include "city/CityFormat.h"
#include "city/RoadGraph.h"

#include <vector>

namespace taxicore::city {

struct ContractionHierarchy {
    std::vector<uint32_t> upFirst; // nodeCount + 1
    std::vector<format::ChArc> upArcs;
    std::vector<uint32_t> downFirst; // nodeCount + 1
    std::vector<format::ChArc> downArcs;
    size_t shortcutCount = 0;
};

ContractionHierarchy buildContractionHierarchy(const RoadGraph &graph);

} // namespace taxicore::city
