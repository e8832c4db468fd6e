#include "EtaSearch.h"

#include "Router.h"
#include "SearchLabels.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace taxicore::city {

namespace {
constexpr int kToTarget = 1;    // SearchLabel::distance slot of the reverse search
constexpr int kFromSource = 0;  // slot of a source's forward search

using Entry = std::pair<double, uint32_t>;
using Queue = std::priority_queue<Entry, std::vector<Entry>, std::greater<>>;

struct Seed {
    uint32_t node;
    double costMs;
};

// Dijkstra over one direction of the hierarchy (up arcs forward, down arcs reversed), calling
// onSettle(node, cost); it stops when onSettle returns false or costs pass the limit.
template<typename OnSettle>
void upwardSearch(std::span<const uint32_t> first, std::span<const format::ChArc> arcs, const Seed (&seeds)[2],
                  int slot, double limitMs, SearchLabels &labels, OnSettle onSettle)
{
    Queue queue;
    auto relax = [&](uint32_t node, double cost) {
        SearchLabel &label = labels.get(node);
        if (cost < label.distance[slot]) {
            label.distance[slot] = cost;
            queue.emplace(cost, node);
        }
    };
    for (const Seed &seed : seeds)
        if (seed.costMs <= limitMs)
            relax(seed.node, seed.costMs);
    while (!queue.empty()) {
        const auto [cost, node] = queue.top();
        queue.pop();
        if (cost > labels.find(node)->distance[slot])
            continue;
        if (cost > limitMs || !onSettle(node, cost))
            break;
        for (uint32_t i = first[node]; i < first[node + 1]; ++i)
            relax(arcs[i].head, cost + arcs[i].weightMs);
    }
}
}  // namespace

std::vector<double> EtaSearch::etaTo(const RoadPoint &target, std::span<const RoadPoint> sources,
                                     double maxSeconds) const
{
    std::vector<double> etas(sources.size(), kUnreachable);
    if (!target.valid)
        return etas;
    const double limitMs = maxSeconds * 1000.0;
    const format::Segment &end = m_data.segments[target.segment];

    SearchLabels toTarget;
    const Seed targetSeeds[2] = {{end.from, partialCostMs(end, Along::Forward, 0, target.offsetM)},
                                 {end.to, partialCostMs(end, Along::Backward, end.lengthM, target.offsetM)}};
    upwardSearch(m_data.downFirst, m_data.downArcs, targetSeeds, kToTarget, limitMs, toTarget,
                 [](uint32_t, double) { return true; });

    for (size_t i = 0; i < sources.size(); ++i) {
        const RoadPoint &source = sources[i];
        if (!source.valid)
            continue;
        const format::Segment &start = m_data.segments[source.segment];
        double best = kUnreachable;
        if (source.segment == target.segment) {
            const Along along = target.offsetM >= source.offsetM ? Along::Forward : Along::Backward;
            best = partialCostMs(start, along, source.offsetM, target.offsetM);
        }
        const Seed sourceSeeds[2] = {{start.to, partialCostMs(start, Along::Forward, source.offsetM, start.lengthM)},
                                     {start.from, partialCostMs(start, Along::Backward, source.offsetM, 0)}};
        SearchLabels fromSource;
        upwardSearch(m_data.upFirst, m_data.upArcs, sourceSeeds, kFromSource, std::min(limitMs, best), fromSource,
                     [&](uint32_t node, double cost) {
                         if (cost >= best)
                             return false;
                         if (const SearchLabel *label = toTarget.find(node))
                             best = std::min(best, cost + label->distance[kToTarget]);
                         return true;
                     });
        if (best <= limitMs)
            etas[i] = best / 1000.0;
    }
    return etas;
}

}  // namespace taxicore::city
