#include "city/ContractionHierarchyBuilder.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <tuple>

namespace taxicore::city {

namespace {
// Witness searches give up after this many settled nodes; a missed witness only costs an
// unnecessary shortcut, never a wrong answer.
constexpr int kWitnessSettleLimit = 500;
constexpr int kSimulationSettleLimit = 100;
constexpr uint64_t kInfinity = std::numeric_limits<uint64_t>::max();

struct Edge {
    uint32_t other;
    uint32_t weight;
    uint32_t via;
};

class Contractor {
public:
    explicit Contractor(const RoadGraph &graph)
        : m_out(graph.nodes.size())
        , m_in(graph.nodes.size())
        , m_contracted(graph.nodes.size(), false)
        , m_deletedNeighbours(graph.nodes.size(), 0)
        , m_distance(graph.nodes.size(), kInfinity)
    {
        for (uint32_t s = 0; s < graph.segments.size(); ++s) {
            const RoadSegment &segment = graph.segments[s];
            if (segment.from == segment.to)
                continue; // a loop never shortens a route between nodes
            if (segment.forwardMs != format::kNotAllowed)
                addOrImprove(segment.from, segment.to, segment.forwardMs, format::kOriginalArcFlag | (s << 1));
            if (segment.backwardMs != format::kNotAllowed)
                addOrImprove(segment.to, segment.from, segment.backwardMs, format::kOriginalArcFlag | (s << 1 | 1));
        }
    }

    ContractionHierarchy run()
    {
        const uint32_t nodeCount = uint32_t(m_out.size());
        m_up.resize(nodeCount);
        m_down.resize(nodeCount);
        using Entry = std::pair<int64_t, uint32_t>;
        std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
        for (uint32_t node = 0; node < nodeCount; ++node)
            queue.emplace(priority(node), node);
        while (!queue.empty()) {
            const uint32_t node = queue.top().second;
            queue.pop();
            if (m_contracted[node])
                continue;
            // Lazy update: the stored priority may be stale since neighbours were contracted.
            const int64_t current = priority(node);
            if (!queue.empty() && current > queue.top().first) {
                queue.emplace(current, node);
                continue;
            }
            contract(node);
        }
        return assemble();
    }

private:
    void addOrImprove(uint32_t tail, uint32_t head, uint32_t weight, uint32_t via)
    {
        for (Edge &edge : m_out[tail]) {
            if (edge.other != head)
                continue;
            if (weight < edge.weight) {
                edge.weight = weight;
                edge.via = via;
                for (Edge &reverse : m_in[head]) {
                    if (reverse.other == tail) {
                        reverse.weight = weight;
                        reverse.via = via;
                    }
                }
            }
            return;
        }
        m_out[tail].push_back({head, weight, via});
        m_in[head].push_back({tail, weight, via});
    }

    // Shortest distances from source avoiding `skip`, up to maxDistance or the settle limit.
    void witnessSearch(uint32_t source, uint32_t skip, uint64_t maxDistance, int settleLimit)
    {
        for (uint32_t node : m_touched)
            m_distance[node] = kInfinity;
        m_touched.clear();
        using Entry = std::pair<uint64_t, uint32_t>;
        std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
        m_distance[source] = 0;
        m_touched.push_back(source);
        queue.emplace(0, source);
        int settled = 0;
        while (!queue.empty() && settled < settleLimit) {
            const auto [distance, node] = queue.top();
            queue.pop();
            if (distance > m_distance[node])
                continue;
            if (distance > maxDistance)
                break;
            ++settled;
            for (const Edge &edge : m_out[node]) {
                if (edge.other == skip)
                    continue;
                const uint64_t candidate = distance + edge.weight;
                if (candidate < m_distance[edge.other]) {
                    if (m_distance[edge.other] == kInfinity)
                        m_touched.push_back(edge.other);
                    m_distance[edge.other] = candidate;
                    queue.emplace(candidate, edge.other);
                }
            }
        }
    }

    // Calls addShortcut(u, x, weight) for every shortcut contracting `node` needs.
    template <typename AddShortcut> void forEachShortcut(uint32_t node, int settleLimit, AddShortcut addShortcut)
    {
        uint32_t maxOut = 0;
        for (const Edge &out : m_out[node])
            maxOut = std::max(maxOut, out.weight);
        for (const Edge &in : m_in[node]) {
            witnessSearch(in.other, node, uint64_t(in.weight) + maxOut, settleLimit);
            for (const Edge &out : m_out[node]) {
                if (out.other == in.other)
                    continue;
                const uint64_t viaNode = uint64_t(in.weight) + out.weight;
                if (m_distance[out.other] > viaNode)
                    addShortcut(in.other, out.other, viaNode);
            }
        }
    }

    int64_t priority(uint32_t node)
    {
        int64_t shortcuts = 0;
        forEachShortcut(node, kSimulationSettleLimit, [&](uint32_t, uint32_t, uint64_t) { ++shortcuts; });
        const int64_t edgeDifference = shortcuts - int64_t(m_in[node].size() + m_out[node].size());
        return 4 * edgeDifference + 2 * m_deletedNeighbours[node];
    }

    void contract(uint32_t node)
    {
        std::vector<std::tuple<uint32_t, uint32_t, uint64_t>> shortcuts;
        forEachShortcut(node, kWitnessSettleLimit, [&](uint32_t tail, uint32_t head, uint64_t weight) {
            shortcuts.emplace_back(tail, head, weight);
        });
        m_contracted[node] = true;
        m_up[node] = m_out[node];
        m_down[node] = m_in[node];
        for (const Edge &in : m_in[node]) {
            std::erase_if(m_out[in.other], [&](const Edge &e) { return e.other == node; });
            ++m_deletedNeighbours[in.other];
        }
        for (const Edge &out : m_out[node]) {
            std::erase_if(m_in[out.other], [&](const Edge &e) { return e.other == node; });
            ++m_deletedNeighbours[out.other];
        }
        m_out[node].clear();
        m_in[node].clear();
        for (const auto &[tail, head, weight] : shortcuts) {
            const uint32_t clamped = uint32_t(std::min<uint64_t>(weight, format::kMaxArcWeightMs));
            addOrImprove(tail, head, clamped, node);
            ++m_shortcutCount;
        }
    }

    static void appendCsr(const std::vector<std::vector<Edge>> &lists, std::vector<uint32_t> &first,
                          std::vector<format::ChArc> &arcs)
    {
        first.assign(1, 0);
        for (const std::vector<Edge> &list : lists) {
            for (const Edge &edge : list)
                arcs.push_back({edge.other, edge.weight, edge.via});
            first.push_back(uint32_t(arcs.size()));
        }
    }

    ContractionHierarchy assemble()
    {
        ContractionHierarchy hierarchy;
        appendCsr(m_up, hierarchy.upFirst, hierarchy.upArcs);
        appendCsr(m_down, hierarchy.downFirst, hierarchy.downArcs);
        hierarchy.shortcutCount = m_shortcutCount;
        return hierarchy;
    }

    std::vector<std::vector<Edge>> m_out; // among nodes not yet contracted
    std::vector<std::vector<Edge>> m_in;
    std::vector<bool> m_contracted;
    std::vector<int64_t> m_deletedNeighbours;
    std::vector<uint64_t> m_distance;
    std::vector<uint32_t> m_touched;
    std::vector<std::vector<Edge>> m_up;
    std::vector<std::vector<Edge>> m_down;
    size_t m_shortcutCount = 0;
};
} // namespace

ContractionHierarchy buildContractionHierarchy(const RoadGraph &graph)
{
    return Contractor(graph).run();
}

} // namespace taxicore::city
