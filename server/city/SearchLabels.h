#pragma once
// Per-query labels of a bidirectional search, in a small open-addressing hash table: a
// contraction-hierarchy query touches a few hundred nodes, so a table sized to the search (not
// to the graph) keeps every query self-contained and safe to run on many threads at once.

#include <cstdint>
#include <limits>
#include <vector>

namespace taxicore::city {

inline constexpr uint32_t kNoNode = 0xFFFFFFFFu;

struct SearchLabel {
    uint32_t node = kNoNode;
    double distance[2] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()};
    uint32_t parent[2] = {kNoNode, kNoNode};    // previous node in each direction's tree
    uint32_t parentArc[2] = {kNoNode, kNoNode}; // arc index, or a seed tag at the tree root
};

class SearchLabels {
public:
    static constexpr uint32_t kInitialBits = 9;
    static constexpr uint32_t kInitialCapacity = 1u << kInitialBits;

    SearchLabels()
        : m_slots(kInitialCapacity)
        , m_mask(kInitialCapacity - 1)
        , m_shift(32 - kInitialBits)
    {
    }

    SearchLabel *find(uint32_t node)
    {
        for (uint32_t slot = slotOf(node);; slot = (slot + 1) & m_mask) {
            if (m_slots[slot].node == node)
                return &m_slots[slot];
            if (m_slots[slot].node == kNoNode)
                return nullptr;
        }
    }

    SearchLabel &get(uint32_t node)
    {
        if (2 * (m_size + 1) > m_slots.size())
            grow();
        uint32_t slot = slotOf(node);
        for (; m_slots[slot].node != kNoNode; slot = (slot + 1) & m_mask) {
            if (m_slots[slot].node == node)
                return m_slots[slot];
        }
        ++m_size;
        m_slots[slot].node = node;
        return m_slots[slot];
    }

private:
    // Fibonacci hashing: the high bits of the product spread consecutive node ids.
    uint32_t slotOf(uint32_t node) const { return (node * 0x9E3779B1u) >> m_shift; }

    void grow()
    {
        std::vector<SearchLabel> old(m_slots.size() * 2);
        old.swap(m_slots);
        m_mask = uint32_t(m_slots.size() - 1);
        --m_shift;
        for (const SearchLabel &label : old) {
            if (label.node == kNoNode)
                continue;
            uint32_t slot = slotOf(label.node);
            while (m_slots[slot].node != kNoNode)
                slot = (slot + 1) & m_mask;
            m_slots[slot] = label;
        }
    }

    std::vector<SearchLabel> m_slots;
    uint32_t m_mask;
    uint32_t m_shift;
    size_t m_size = 0;
};

} // namespace taxicore::city
