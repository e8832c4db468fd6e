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
// The search queue: a binary heap kept in a vector the caller reuses from one search to the next
// (the same push_heap/pop_heap a std::priority_queue with std::greater does).
using Heap = std::vector<Entry>;
using Queue = std::priority_queue<Entry, std::vector<Entry>, std::greater<>>;

struct Seed {
    uint32_t node;
    double costMs;
};

// A source's upward-search costs, kept from one source to the next and cleared slot by slot: a
// search touches ~100 nodes, and allocating and filling a fresh 512-label table for each of a
// nearby request's 20 sources cost as much as the searches (docs/benchmarks.md).
class SourceCosts {
public:
    SourceCosts()
        : m_nodes(kInitialCapacity, kNoNode)
        , m_costs(kInitialCapacity)
    {
    }
    double *find(uint32_t node)
    {
        for (uint32_t slot = slotOf(node);; slot = (slot + 1) & mask()) {
            if (m_nodes[slot] == node)
                return &m_costs[slot];
            if (m_nodes[slot] == kNoNode)
                return nullptr;
        }
    }
    double &get(uint32_t node)
    {
        if (2 * (m_used.size() + 1) > m_nodes.size())
            grow();
        uint32_t slot = slotOf(node);
        for (; m_nodes[slot] != kNoNode; slot = (slot + 1) & mask())
            if (m_nodes[slot] == node)
                return m_costs[slot];
        m_nodes[slot] = node;
        m_costs[slot] = kUnreachable;
        m_used.push_back(slot);
        return m_costs[slot];
    }
    void clear()
    {
        for (const uint32_t slot : m_used)
            m_nodes[slot] = kNoNode;
        m_used.clear();
    }

private:
    static constexpr uint32_t kInitialCapacity = 1u << 9;
    uint32_t mask() const { return uint32_t(m_nodes.size() - 1); }
    // Fibonacci hashing, as SearchLabels: the high bits of the product spread consecutive ids.
    uint32_t slotOf(uint32_t node) const { return (node * 0x9E3779B1u) >> m_shift; }
    void grow()
    {
        std::vector<uint32_t> nodes(m_nodes.size() * 2, kNoNode);
        std::vector<double> costs(nodes.size());
        nodes.swap(m_nodes);
        costs.swap(m_costs);
        --m_shift;
        std::vector<uint32_t> used;
        used.swap(m_used);
        for (const uint32_t old : used) {
            uint32_t slot = slotOf(nodes[old]);
            while (m_nodes[slot] != kNoNode)
                slot = (slot + 1) & mask();
            m_nodes[slot] = nodes[old];
            m_costs[slot] = costs[old];
            m_used.push_back(slot);
        }
    }

    std::vector<uint32_t> m_nodes;
    std::vector<double> m_costs;
    std::vector<uint32_t> m_used;
    uint32_t m_shift = 32 - 9; // log2(kInitialCapacity) high bits of the product
};

double &costAt(SearchLabels &labels, uint32_t node, int slot)
{
    return labels.get(node).distance[slot];
}
double settledCost(SearchLabels &labels, uint32_t node, int slot)
{
    return labels.find(node)->distance[slot];
}
double &costAt(SourceCosts &costs, uint32_t node, int)
{
    return costs.get(node);
}
double settledCost(SourceCosts &costs, uint32_t node, int)
{
    return *costs.find(node);
}

// Dijkstra over one direction of the hierarchy (up arcs forward, down arcs reversed), calling
// onSettle(node, cost); it stops when onSettle returns false or costs pass the limit.
template <typename Labels, typename OnSettle>
void upwardSearch(std::span<const uint32_t> first, std::span<const format::ChArc> arcs, const Seed (&seeds)[2],
                  int slot, double limitMs, Labels &labels, Heap &queue, OnSettle onSettle)
{
    queue.clear();
    auto relax = [&](uint32_t node, double cost) {
        double &known = costAt(labels, node, slot);
        if (cost < known) {
            known = cost;
            queue.emplace_back(cost, node);
            std::push_heap(queue.begin(), queue.end(), std::greater<>());
        }
    };
    for (const Seed &seed : seeds)
        if (seed.costMs <= limitMs)
            relax(seed.node, seed.costMs);
    while (!queue.empty()) {
        std::pop_heap(queue.begin(), queue.end(), std::greater<>());
        const auto [cost, node] = queue.back();
        queue.pop_back();
        if (cost > settledCost(labels, node, slot))
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
    Heap queue;
    const Seed targetSeeds[2] = {{end.from, partialCostMs(end, Along::Forward, 0, target.offsetM)},
                                 {end.to, partialCostMs(end, Along::Backward, end.lengthM, target.offsetM)}};
    upwardSearch(m_data.downFirst, m_data.downArcs, targetSeeds, kToTarget, limitMs, toTarget, queue,
                 [](uint32_t, double) { return true; });

    SourceCosts fromSource;

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
        fromSource.clear();
        upwardSearch(m_data.upFirst, m_data.upArcs, sourceSeeds, kFromSource, std::min(limitMs, best), fromSource,
                     queue, [&](uint32_t node, double cost) {
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
