#include "city/Router.h"

#include "city/SearchLabels.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <queue>

namespace taxicore::city {

namespace {
constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr uint32_t kSeedTag = 0xFFFFFFF0u; // parentArc of a search root: kSeedTag | Along
constexpr int kForward = 0;
constexpr int kBackward = 1;

using QueueEntry = std::pair<double, uint32_t>;
using Queue = std::priority_queue<QueueEntry, std::vector<QueueEntry>, std::greater<>>;

bool allowed(uint32_t ms)
{
    return ms != format::kNotAllowed;
}
} // namespace

double partialCostMs(const format::Segment &segment, Along along, double fromOffsetM, double toOffsetM)
{
    const uint32_t ms = along == Along::Forward ? segment.forwardMs : segment.backwardMs;
    if (!allowed(ms))
        return kInfinity;
    if (segment.lengthM <= 0)
        return 0;
    return std::abs(toOffsetM - fromOffsetM) / segment.lengthM * ms;
}

Router::Router(const CityData &data)
    : m_data(data)
    , m_assembler(data)
{
}

Route Router::route(const RoadPoint &from, const RoadPoint &to) const
{
    if (!from.valid || !to.valid)
        return {};
    const format::Segment &start = m_data.segments[from.segment];
    const format::Segment &end = m_data.segments[to.segment];
    const double startLength = start.lengthM;
    const double endLength = end.lengthM;
    const std::vector<Seed> sources = {
        {start.to, partialCostMs(start, Along::Forward, from.offsetM, startLength), Along::Forward},
        {start.from, partialCostMs(start, Along::Backward, from.offsetM, 0), Along::Backward}};
    const std::vector<Seed> targets = {
        {end.from, partialCostMs(end, Along::Forward, 0, to.offsetM), Along::Forward},
        {end.to, partialCostMs(end, Along::Backward, endLength, to.offsetM), Along::Backward}};

    double directMs = kInfinity;
    if (from.segment == to.segment) {
        const Along along = to.offsetM >= from.offsetM ? Along::Forward : Along::Backward;
        directMs = partialCostMs(start, along, from.offsetM, to.offsetM);
    }
    SearchLabels labels;
    const Meeting meeting = search(sources, targets, directMs, labels);
    if (meeting.node == kNoNode)
        return directMs < kInfinity ? m_assembler.assembleWithinSegment(from, to, directMs) : Route{};

    // Walk both search trees from the meeting node back to their roots, unpacking shortcuts.
    std::vector<uint32_t> forwardRefs;
    std::vector<uint32_t> backwardRefs;
    Along leave = Along::Forward;
    Along enter = Along::Forward;
    std::vector<std::pair<uint32_t, uint32_t>> upChain; // (tail node, up arc index)
    for (uint32_t node = meeting.node;;) {
        const SearchLabel *label = labels.find(node);
        if (label->parentArc[kForward] >= kSeedTag) {
            leave = Along(label->parentArc[kForward] - kSeedTag);
            break;
        }
        upChain.emplace_back(label->parent[kForward], label->parentArc[kForward]);
        node = label->parent[kForward];
    }
    for (auto it = upChain.rbegin(); it != upChain.rend(); ++it) {
        const format::ChArc &arc = m_data.upArcs[it->second];
        if (!unpack(it->first, arc.head, arc.via, forwardRefs))
            return {};
    }
    for (uint32_t node = meeting.node;;) {
        const SearchLabel *label = labels.find(node);
        if (label->parentArc[kBackward] >= kSeedTag) {
            enter = Along(label->parentArc[kBackward] - kSeedTag);
            break;
        }
        // A down arc stored at `parent` with head `node` is the road arc node -> parent.
        const format::ChArc &arc = m_data.downArcs[label->parentArc[kBackward]];
        if (!unpack(node, label->parent[kBackward], arc.via, backwardRefs))
            return {};
        node = label->parent[kBackward];
    }
    forwardRefs.insert(forwardRefs.end(), backwardRefs.begin(), backwardRefs.end());
    return m_assembler.assemble(from, leave, forwardRefs, to, enter, meeting.costMs);
}

Router::Meeting Router::search(const std::vector<Seed> &sources, const std::vector<Seed> &targets, double bestMs,
                               SearchLabels &labels) const
{
    Queue queues[2];
    auto relax = [&](int direction, uint32_t node, double cost, uint32_t parent, uint32_t parentArc) {
        SearchLabel &label = labels.get(node);
        if (cost < label.distance[direction]) {
            label.distance[direction] = cost;
            label.parent[direction] = parent;
            label.parentArc[direction] = parentArc;
            queues[direction].emplace(cost, node);
        }
    };
    for (const Seed &seed : sources)
        if (seed.costMs < kInfinity)
            relax(kForward, seed.node, seed.costMs, kNoNode, kSeedTag + uint32_t(seed.along));
    for (const Seed &seed : targets)
        if (seed.costMs < kInfinity)
            relax(kBackward, seed.node, seed.costMs, kNoNode, kSeedTag + uint32_t(seed.along));

    Meeting meeting{bestMs, kNoNode};
    bool finished[2] = {false, false};
    while (!finished[kForward] || !finished[kBackward]) {
        int direction = kForward;
        if (finished[kForward]
            || (!finished[kBackward] && !queues[kBackward].empty()
                && (queues[kForward].empty() || queues[kBackward].top().first < queues[kForward].top().first)))
            direction = kBackward;
        Queue &queue = queues[direction];
        if (queue.empty() || queue.top().first >= meeting.costMs) {
            finished[direction] = true;
            continue;
        }
        const auto [cost, node] = queue.top();
        queue.pop();
        const SearchLabel &label = *labels.find(node);
        if (cost > label.distance[direction])
            continue; // stale entry
        const double other = label.distance[1 - direction];
        if (cost + other < meeting.costMs)
            meeting = {cost + other, node};

        const auto &firsts = direction == kForward ? m_data.upFirst : m_data.downFirst;
        const auto &arcs = direction == kForward ? m_data.upArcs : m_data.downArcs;
        // Stall-on-demand: if a higher node reaches this one more cheaply, its subtree is useless.
        const auto &oppositeFirsts = direction == kForward ? m_data.downFirst : m_data.upFirst;
        const auto &oppositeArcs = direction == kForward ? m_data.downArcs : m_data.upArcs;
        bool stalled = false;
        for (uint32_t i = oppositeFirsts[node]; i < oppositeFirsts[node + 1] && !stalled; ++i) {
            const SearchLabel *higher = labels.find(oppositeArcs[i].head);
            stalled = higher && higher->distance[direction] + oppositeArcs[i].weightMs < cost;
        }
        if (stalled)
            continue;
        for (uint32_t i = firsts[node]; i < firsts[node + 1]; ++i)
            relax(direction, arcs[i].head, cost + arcs[i].weightMs, node, i);
    }
    return meeting;
}

const format::ChArc *Router::findArc(std::span<const format::ChArc> arcs, uint32_t head) const
{
    const format::ChArc *best = nullptr;
    for (const format::ChArc &arc : arcs) {
        if (arc.head == head && (!best || arc.weightMs < best->weightMs))
            best = &arc;
    }
    return best;
}

bool Router::unpack(uint32_t tail, uint32_t head, uint32_t via, std::vector<uint32_t> &segmentRefs) const
{
    struct Pending {
        uint32_t tail;
        uint32_t head;
        uint32_t via;
    };
    // A valid hierarchy unpacks to a simple path; more steps than nodes means a corrupt file.
    size_t budget = 2 * size_t(m_data.nodes.size()) + 2;
    thread_local std::vector<Pending> stack; // reused: unpacking runs once per route arc
    stack.assign(1, {tail, head, via});
    while (!stack.empty()) {
        if (budget-- == 0)
            return false;
        const Pending arc = stack.back();
        stack.pop_back();
        if (arc.via & format::kOriginalArcFlag) {
            segmentRefs.push_back(arc.via & ~format::kOriginalArcFlag);
            continue;
        }
        const uint32_t middle = arc.via;
        const format::ChArc *first = findArc(
            m_data.downArcs.subspan(m_data.downFirst[middle], m_data.downFirst[middle + 1] - m_data.downFirst[middle]),
            arc.tail);
        const format::ChArc *second =
            findArc(m_data.upArcs.subspan(m_data.upFirst[middle], m_data.upFirst[middle + 1] - m_data.upFirst[middle]),
                    arc.head);
        if (!first || !second)
            return false;
        stack.push_back({middle, arc.head, second->via});
        stack.push_back({arc.tail, middle, first->via});
    }
    return true;
}

} // namespace taxicore::city
