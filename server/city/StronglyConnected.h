#pragma once
// Strongly connected components of a directed graph (iterative Kosaraju: no recursion depth
// limit on long roads).

#include <cstdint>
#include <utility>
#include <vector>

namespace taxicore::city {

// Component id of every node.
std::vector<uint32_t> stronglyConnectedComponents(uint32_t nodeCount,
                                                  const std::vector<std::pair<uint32_t, uint32_t>> &arcs);

// The id of the component with the most nodes.
uint32_t largestComponent(const std::vector<uint32_t> &component);

} // namespace taxicore::city
