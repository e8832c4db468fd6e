#include "city/EtaSearch.h"

#include "city/Router.h"
#include "city/SearchLabels.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace taxicore::city {

namespace {
constexpr int kToTarget = 1;   // SearchLabel::distance slot of the reverse search
constexpr int kFromSource = 0; // slot of a source's forward search

using Entry = std::pair<double, uint32_t>;
using Queue = std::priority_queue<Entry, std::vector<Entry>, std::greater<>>;

struct Seed {
    uint32_t node;
    double costMs;
};

// Dijkstra over one direction of the hierarchy (up arcs forward, down arcs reversed), calling
// onSettle(node, cost); it stops when onSettle returns false or costs pass the limit.
template <typename OnSettle>
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
} // namespace

std::vector<double> EtaSearch::etaTo(const RoadPoint &target, std::span<const RoadPoint> sources,
                                     double maxSeconds) const
{
    if (!target.valid)
        return std::vector<double>(sources.size(), kUnreachable);
    const double limitMs = maxSeconds * 1000.0;
    return sources.size() > kBucketSearchMaxSources ? byReverseDijkstra(target, sources, limitMs)
                                                    : byHierarchy(target, sources, limitMs);
}

std::vector<double> EtaSearch::byHierarchy(const RoadPoint &target, std::span<const RoadPoint> sources,
                                           double limitMs) const
{
    std::vector<double> etas(sources.size(), kUnreachable);
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

std::vector<double> EtaSearch::byReverseDijkstra(const RoadPoint &target, std::span<const RoadPoint> sources,
                                                 double limitMs) const
{
    const format::Segment &end = m_data.segments[target.segment];
    // Time from each node to the target; exact for settled nodes, above the limit for the rest.
    std::vector<double> toTarget(m_data.nodes.size(), kUnreachable);
    std::vector<bool> wanted(m_data.nodes.size(), false);
    size_t wantedLeft = 0;
    for (const RoadPoint &source : sources) {
        if (!source.valid)
            continue;
        for (const uint32_t node : {m_data.segments[source.segment].from, m_data.segments[source.segment].to}) {
            if (!wanted[node]) {
                wanted[node] = true;
                ++wantedLeft;
            }
        }
    }
    Queue queue;
    auto relax = [&](uint32_t node, double cost) {
        if (cost < toTarget[node]) {
            toTarget[node] = cost;
            queue.emplace(cost, node);
        }
    };
    relax(end.from, partialCostMs(end, Along::Forward, 0, target.offsetM));
    relax(end.to, partialCostMs(end, Along::Backward, end.lengthM, target.offsetM));
    while (!queue.empty() && wantedLeft > 0) {
        const auto [cost, node] = queue.top();
        queue.pop();
        if (cost > toTarget[node])
            continue;
        if (cost > limitMs)
            break;
        if (wanted[node]) {
            wanted[node] = false;
            --wantedLeft;
        }
        for (const format::Arc &arc : m_data.incoming(node))
            relax(arc.head, cost + arc.weightMs);
    }

    std::vector<double> etas(sources.size(), kUnreachable);
    for (size_t i = 0; i < sources.size(); ++i) {
        const RoadPoint &source = sources[i];
        if (!source.valid)
            continue;
        const format::Segment &start = m_data.segments[source.segment];
        double best = std::min(partialCostMs(start, Along::Forward, source.offsetM, start.lengthM) + toTarget[start.to],
                               partialCostMs(start, Along::Backward, source.offsetM, 0) + toTarget[start.from]);
        if (source.segment == target.segment) {
            const Along along = target.offsetM >= source.offsetM ? Along::Forward : Along::Backward;
            best = std::min(best, partialCostMs(start, along, source.offsetM, target.offsetM));
        }
        if (best <= limitMs)
            etas[i] = best / 1000.0;
    }
    return etas;
}

} // namespace taxicore::city
