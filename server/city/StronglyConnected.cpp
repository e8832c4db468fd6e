#include "city/StronglyConnected.h"

#include <algorithm>

namespace taxicore::city {

namespace {
constexpr uint32_t kUnassigned = 0xFFFFFFFFu;

struct Adjacency {
    std::vector<uint32_t> first;
    std::vector<uint32_t> heads;
};

Adjacency adjacency(uint32_t nodeCount, const std::vector<std::pair<uint32_t, uint32_t>> &arcs, bool reversed)
{
    Adjacency result;
    result.first.assign(nodeCount + 1, 0);
    for (const auto &[tail, head] : arcs)
        ++result.first[(reversed ? head : tail) + 1];
    for (uint32_t i = 0; i < nodeCount; ++i)
        result.first[i + 1] += result.first[i];
    result.heads.resize(arcs.size());
    std::vector<uint32_t> next(result.first.begin(), result.first.end() - 1);
    for (const auto &[tail, head] : arcs)
        result.heads[next[reversed ? head : tail]++] = reversed ? tail : head;
    return result;
}

// Nodes in increasing DFS finishing time.
std::vector<uint32_t> finishingOrder(const Adjacency &graph, uint32_t nodeCount)
{
    std::vector<uint32_t> order;
    order.reserve(nodeCount);
    std::vector<bool> visited(nodeCount, false);
    std::vector<std::pair<uint32_t, uint32_t>> stack; // node, next arc to look at
    for (uint32_t root = 0; root < nodeCount; ++root) {
        if (visited[root])
            continue;
        visited[root] = true;
        stack.emplace_back(root, graph.first[root]);
        while (!stack.empty()) {
            auto &[node, arc] = stack.back();
            if (arc == graph.first[node + 1]) {
                order.push_back(node);
                stack.pop_back();
                continue;
            }
            const uint32_t head = graph.heads[arc++];
            if (!visited[head]) {
                visited[head] = true;
                stack.emplace_back(head, graph.first[head]);
            }
        }
    }
    return order;
}
} // namespace

std::vector<uint32_t> stronglyConnectedComponents(uint32_t nodeCount,
                                                  const std::vector<std::pair<uint32_t, uint32_t>> &arcs)
{
    const std::vector<uint32_t> order = finishingOrder(adjacency(nodeCount, arcs, false), nodeCount);
    const Adjacency reversed = adjacency(nodeCount, arcs, true);
    std::vector<uint32_t> component(nodeCount, kUnassigned);
    uint32_t nextComponent = 0;
    std::vector<uint32_t> stack;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        if (component[*it] != kUnassigned)
            continue;
        component[*it] = nextComponent;
        stack.push_back(*it);
        while (!stack.empty()) {
            const uint32_t node = stack.back();
            stack.pop_back();
            for (uint32_t arc = reversed.first[node]; arc < reversed.first[node + 1]; ++arc) {
                const uint32_t head = reversed.heads[arc];
                if (component[head] == kUnassigned) {
                    component[head] = nextComponent;
                    stack.push_back(head);
                }
            }
        }
        ++nextComponent;
    }
    return component;
}

uint32_t largestComponent(const std::vector<uint32_t> &component)
{
    if (component.empty())
        return 0;
    std::vector<uint32_t> sizes(*std::max_element(component.begin(), component.end()) + 1, 0);
    for (uint32_t id : component)
        ++sizes[id];
    return uint32_t(std::max_element(sizes.begin(), sizes.end()) - sizes.begin());
}

} // namespace taxicore::city
