#pragma once
// Paths and a reference shortest-path search shared by the city test suites.

#include "city/City.h"

#include <QString>
#include <cmath>
#include <functional>
#include <queue>
#include <vector>

namespace citytest {

inline QString sourcePath(const char *relative)
{
    return QStringLiteral(TAXICORE_SOURCE_DIR "/") + QLatin1String(relative);
}
inline QString bundledCityPath()
{
    return sourcePath("resources/cities/gothenburg.taxicity");
}
inline QString fixturePath(const char *name)
{
    return sourcePath("tests/city/fixtures/") + QLatin1String(name);
}

// Plain Dijkstra over the road arcs (not the hierarchy) between two road points, in seconds;
// written independently of the library's router, with partial segments at both ends.
inline double referenceDurationS(const taxicore::city::CityData &data, const taxicore::city::RoadPoint &from,
                                 const taxicore::city::RoadPoint &to)
{
    using namespace taxicore::city;
    constexpr double inf = std::numeric_limits<double>::infinity();
    auto part = [](const format::Segment &s, bool forward, double metres) {
        const uint32_t ms = forward ? s.forwardMs : s.backwardMs;
        if (ms == format::kNotAllowed)
            return inf;
        return s.lengthM > 0 ? metres / s.lengthM * ms : 0.0;
    };
    const format::Segment &a = data.segments[from.segment];
    const format::Segment &b = data.segments[to.segment];
    std::vector<double> dist(data.nodes.size(), inf);
    using Entry = std::pair<double, uint32_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
    auto push = [&](uint32_t node, double d) {
        if (d < dist[node]) {
            dist[node] = d;
            queue.emplace(d, node);
        }
    };
    push(a.to, part(a, true, a.lengthM - from.offsetM));
    push(a.from, part(a, false, from.offsetM));
    while (!queue.empty()) {
        const auto [d, node] = queue.top();
        queue.pop();
        if (d > dist[node])
            continue;
        for (const format::Arc &arc : data.outgoing(node))
            push(arc.head, d + arc.weightMs);
    }
    double best =
        std::min(dist[b.from] + part(b, true, to.offsetM), dist[b.to] + part(b, false, b.lengthM - to.offsetM));
    if (from.segment == to.segment)
        best = std::min(best, part(a, to.offsetM >= from.offsetM, std::abs(to.offsetM - from.offsetM)));
    return best / 1000.0;
}

inline double polylineLengthM(const std::vector<taxicore::city::GeoPoint> &line)
{
    double length = 0;
    for (size_t i = 1; i < line.size(); ++i)
        length += taxicore::city::haversineMeters(line[i - 1], line[i]);
    return length;
}

} // namespace citytest
