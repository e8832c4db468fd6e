#pragma once
// Fastest routes between two road points: a bidirectional Dijkstra over the contraction
// hierarchy stored in the city file (upward arcs from the start, downward arcs reversed from
// the end, stall-on-demand), then shortcuts unpacked into road segments. Const and
// allocation-local: safe to call from many threads at once.

#include "city/CityData.h"
#include "city/CityTypes.h"
#include "city/RouteAssembler.h"

namespace taxicore::city {

class Router {
public:
    explicit Router(const CityData &data);

    Route route(const RoadPoint &from, const RoadPoint &to) const;

private:
    struct Seed {
        uint32_t node;
        double costMs;
        Along along;
    };
    struct Meeting {
        double costMs;
        uint32_t node;
    };

    Meeting search(const std::vector<Seed> &sources, const std::vector<Seed> &targets, double bestMs,
                   class SearchLabels &labels) const;
    bool unpack(uint32_t tail, uint32_t head, uint32_t via, std::vector<uint32_t> &segmentRefs) const;
    const format::ChArc *findArc(std::span<const format::ChArc> arcs, uint32_t head) const;

    const CityData &m_data;
    RouteAssembler m_assembler;
};

// Travel time in ms along part of a segment, or infinity where the direction is not allowed.
double partialCostMs(const format::Segment &segment, Along along, double fromOffsetM, double toOffsetM);

} // namespace taxicore::city
