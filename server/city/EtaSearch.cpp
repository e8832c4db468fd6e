#include "EtaSearch.h"

#include "Router.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace taxicore::city {

std::vector<double> EtaSearch::etaTo(const RoadPoint &target, std::span<const RoadPoint> sources,
                                     double maxSeconds) const
{
    std::vector<double> etas(sources.size(), kUnreachable);
    if (!target.valid)
        return etas;
    const double limitMs = maxSeconds * 1000.0;
    const format::Segment &end = m_data.segments[target.segment];

    // Time from each node to the target, settled in increasing order.
    std::vector<double> toTarget(m_data.nodes.size(), kUnreachable);
    std::vector<bool> settled(m_data.nodes.size(), false);
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
    using Entry = std::pair<double, uint32_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
    auto seed = [&](uint32_t node, double cost) {
        if (cost < toTarget[node]) {
            toTarget[node] = cost;
            queue.emplace(cost, node);
        }
    };
    seed(end.from, partialCostMs(end, Along::Forward, 0, target.offsetM));
    seed(end.to, partialCostMs(end, Along::Backward, end.lengthM, target.offsetM));
    while (!queue.empty() && wantedLeft > 0) {
        const auto [cost, node] = queue.top();
        queue.pop();
        if (settled[node] || cost > toTarget[node])
            continue;
        if (cost > limitMs)
            break;
        settled[node] = true;
        if (wanted[node])
            --wantedLeft;
        for (const format::Arc &arc : m_data.incoming(node))
            seed(arc.head, cost + arc.weightMs);
    }

    for (size_t i = 0; i < sources.size(); ++i) {
        const RoadPoint &source = sources[i];
        if (!source.valid)
            continue;
        const format::Segment &start = m_data.segments[source.segment];
        double best = std::min(
                partialCostMs(start, Along::Forward, source.offsetM, start.lengthM) + toTarget[start.to],
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

}  // namespace taxicore::city
