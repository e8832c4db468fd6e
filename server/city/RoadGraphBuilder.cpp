#include "city/RoadGraphBuilder.h"

#include "city/Geo.h"
#include "city/StronglyConnected.h"
#include "city/WayRules.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace taxicore::city {

namespace {
constexpr uint32_t kNotANode = 0xFFFFFFFFu;

struct DrivableRawWay {
    const RawWay *way;
    DrivableWay rules;
};

GeoPoint toGeo(format::Coord c)
{
    return {fromCoordUnits(c.lat), fromCoordUnits(c.lng)};
}

double shapeLength(const std::vector<format::Coord> &shape)
{
    double length = 0;
    for (size_t i = 1; i < shape.size(); ++i)
        length += haversineMeters(toGeo(shape[i - 1]), toGeo(shape[i]));
    return length;
}

// A point becomes a graph node when it ends a way or appears more than once among all ways.
std::unordered_map<uint64_t, uint32_t> nodeKeyUses(const std::vector<DrivableRawWay> &ways)
{
    std::unordered_map<uint64_t, uint32_t> uses;
    for (const DrivableRawWay &drivable : ways) {
        const std::vector<uint64_t> &keys = drivable.way->nodeKeys;
        for (size_t i = 0; i < keys.size(); ++i) {
            const bool endpoint = i == 0 || i + 1 == keys.size();
            uses[keys[i]] += endpoint ? 2 : 1;
        }
    }
    return uses;
}

class Splitter {
public:
    explicit Splitter(const std::unordered_map<uint64_t, uint32_t> &uses)
        : m_uses(uses)
    {
    }

    void split(const DrivableRawWay &drivable)
    {
        const RawWay &way = *drivable.way;
        const uint32_t nameIndex = internName(way.name);
        std::vector<format::Coord> shape;
        uint32_t startNode = kNotANode;
        for (size_t i = 0; i < way.points.size(); ++i) {
            if (i > 0 && way.nodeKeys[i] == way.nodeKeys[i - 1])
                continue; // repeated point
            shape.push_back(way.points[i]);
            if (m_uses.at(way.nodeKeys[i]) < 2)
                continue;
            const uint32_t node = nodeFor(way.nodeKeys[i], way.points[i]);
            if (startNode != kNotANode)
                addSegment(startNode, node, nameIndex, drivable.rules, shape);
            startNode = node;
            shape.assign(1, way.points[i]);
        }
    }

    RoadGraph take() { return std::move(m_graph); }

private:
    uint32_t nodeFor(uint64_t key, format::Coord coord)
    {
        const auto [it, inserted] = m_nodeIds.try_emplace(key, uint32_t(m_graph.nodes.size()));
        if (inserted)
            m_graph.nodes.push_back(coord);
        return it->second;
    }

    uint32_t internName(const std::string &name)
    {
        if (name.empty())
            return format::kNoName;
        const auto [it, inserted] = m_nameIds.try_emplace(name, uint32_t(m_graph.names.size()));
        if (inserted)
            m_graph.names.push_back(name);
        return it->second;
    }

    void addSegment(uint32_t from, uint32_t to, uint32_t nameIndex, const DrivableWay &rules,
                    const std::vector<format::Coord> &shape)
    {
        RoadSegment segment;
        segment.from = from;
        segment.to = to;
        segment.nameIndex = nameIndex;
        segment.shape = shape;
        segment.lengthM = shapeLength(shape);
        if (from == to && segment.lengthM == 0)
            return;
        segment.roadClass = rules.roadClass;
        segment.speedKmh = rules.speedKmh;
        const uint32_t ms = travelTimeMs(segment.lengthM, rules.speedKmh);
        if (rules.direction != TravelDirection::Backward)
            segment.forwardMs = ms;
        if (rules.direction != TravelDirection::Forward)
            segment.backwardMs = ms;
        m_graph.segments.push_back(std::move(segment));
    }

    const std::unordered_map<uint64_t, uint32_t> &m_uses;
    std::unordered_map<uint64_t, uint32_t> m_nodeIds;
    std::unordered_map<std::string, uint32_t> m_nameIds;
    RoadGraph m_graph;
};

std::vector<std::pair<uint32_t, uint32_t>> directedArcs(const RoadGraph &graph)
{
    std::vector<std::pair<uint32_t, uint32_t>> arcs;
    for (const RoadSegment &segment : graph.segments) {
        if (segment.forwardMs != format::kNotAllowed)
            arcs.emplace_back(segment.from, segment.to);
        if (segment.backwardMs != format::kNotAllowed)
            arcs.emplace_back(segment.to, segment.from);
    }
    return arcs;
}

RoadGraph keepComponent(RoadGraph graph, const std::vector<uint32_t> &component, uint32_t keep)
{
    RoadGraph kept;
    std::vector<uint32_t> newId(graph.nodes.size(), kNotANode);
    for (uint32_t node = 0; node < graph.nodes.size(); ++node) {
        if (component[node] == keep) {
            newId[node] = uint32_t(kept.nodes.size());
            kept.nodes.push_back(graph.nodes[node]);
        }
    }
    std::vector<uint32_t> newName(graph.names.size(), format::kNoName);
    for (RoadSegment &segment : graph.segments) {
        if (newId[segment.from] == kNotANode || newId[segment.to] == kNotANode)
            continue;
        segment.from = newId[segment.from];
        segment.to = newId[segment.to];
        if (segment.nameIndex != format::kNoName) {
            uint32_t &name = newName[segment.nameIndex];
            if (name == format::kNoName) {
                name = uint32_t(kept.names.size());
                kept.names.push_back(graph.names[segment.nameIndex]);
            }
            segment.nameIndex = name;
        }
        kept.segments.push_back(std::move(segment));
    }
    return kept;
}
} // namespace

uint32_t travelTimeMs(double lengthM, double speedKmh)
{
    const double ms = std::round(lengthM / (speedKmh / 3.6) * 1000.0);
    return uint32_t(std::clamp(ms, 1.0, double(format::kMaxArcWeightMs)));
}

RoadGraph buildRoadGraph(const std::vector<RawWay> &ways, RoadGraphStats *stats)
{
    std::vector<DrivableRawWay> drivable;
    for (const RawWay &way : ways) {
        if (way.points.size() < 2 || way.points.size() != way.nodeKeys.size())
            continue;
        if (const std::optional<DrivableWay> rules = classifyWay(way))
            drivable.push_back({&way, *rules});
    }
    const std::unordered_map<uint64_t, uint32_t> uses = nodeKeyUses(drivable);
    Splitter splitter(uses);
    for (const DrivableRawWay &way : drivable)
        splitter.split(way);
    RoadGraph graph = splitter.take();
    if (stats) {
        stats->waysRead = ways.size();
        stats->waysDrivable = drivable.size();
        stats->nodesBeforeComponentFilter = graph.nodes.size();
        stats->segmentsBeforeComponentFilter = graph.segments.size();
    }
    if (graph.nodes.empty())
        return graph;
    const std::vector<uint32_t> component =
        stronglyConnectedComponents(uint32_t(graph.nodes.size()), directedArcs(graph));
    return keepComponent(std::move(graph), component, largestComponent(component));
}

} // namespace taxicore::city
