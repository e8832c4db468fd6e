#include "CityRoads.h"

#include "MapProjection.h"

#include "city/City.h"
#include "city/CityFormat.h"

#include <QHash>
#include <cmath>
#include <unordered_map>

std::vector<RoadStroke> CityRoads::graticule(const MapProjection &projection)
{
    std::vector<RoadStroke> strokes;
    const int rows = int(std::lround((kNorth - kSouth) / kGridStepDeg));
    const int cols = int(std::lround((kEast - kWest) / kGridStepDeg));
    for (int i = 1; i < rows; ++i) {
        const double lat = kSouth + i * kGridStepDeg;
        strokes.push_back({RoadStroke::Kind::Grid, {projection.toMetres(lat, kWest), projection.toMetres(lat, kEast)}});
    }
    for (int i = 1; i < cols; ++i) {
        const double lng = kWest + i * kGridStepDeg;
        strokes.push_back(
            {RoadStroke::Kind::Grid, {projection.toMetres(kSouth, lng), projection.toMetres(kNorth, lng)}});
    }
    strokes.push_back(
        {RoadStroke::Kind::Boundary,
         {projection.toMetres(kNorth, kWest), projection.toMetres(kNorth, kEast), projection.toMetres(kSouth, kEast),
          projection.toMetres(kSouth, kWest), projection.toMetres(kNorth, kWest)}});
    return strokes;
}

namespace {
RoadStroke::Kind kindOf(taxicore::city::RoadClass roadClass)
{
    using taxicore::city::RoadClass;
    switch (roadClass) {
    case RoadClass::Motorway:
    case RoadClass::Trunk:
    case RoadClass::Primary:
    case RoadClass::Secondary:
        return RoadStroke::Kind::Major;
    case RoadClass::MotorwayLink:
    case RoadClass::TrunkLink:
    case RoadClass::PrimaryLink:
    case RoadClass::SecondaryLink:
    case RoadClass::TertiaryLink:
        return RoadStroke::Kind::Link;
    case RoadClass::Service:
        return RoadStroke::Kind::Service;
    case RoadClass::Tertiary:
    case RoadClass::Unclassified:
    case RoadClass::Residential:
    case RoadClass::LivingStreet:
    case RoadClass::Road:
        return RoadStroke::Kind::Minor;
    }
    return RoadStroke::Kind::Minor;
}
} // namespace

std::vector<RoadStroke> CityRoads::streets(const taxicore::city::City &city, const MapProjection &projection)
{
    std::vector<RoadStroke> strokes;
    for (const auto &polyline : city.roadPolylines()) {
        RoadStroke stroke{kindOf(polyline.roadClass), {}};
        stroke.points.reserve(polyline.points.size());
        for (const auto &p : polyline.points)
            stroke.points.push_back(projection.toMetres(p.lat, p.lng));
        strokes.push_back(std::move(stroke));
    }
    return strokes;
}

namespace {
int rankOf(taxicore::city::RoadClass roadClass)
{
    using taxicore::city::RoadClass;
    switch (kindOf(roadClass)) {
    case RoadStroke::Kind::Major:
        return 0;
    default:
        return roadClass == RoadClass::Tertiary ? 1 : 2;
    }
}
} // namespace

std::vector<NamedStreet> CityRoads::namedStreets(const taxicore::city::City &city, const MapProjection &projection)
{
    const auto &data = city.data();
    // Road pieces of each name, and which of them meet at each node.
    std::unordered_map<uint32_t, std::vector<uint32_t>> byName;
    for (uint32_t s = 0; s < data.segments.size(); ++s) {
        const auto &segment = data.segments[s];
        if (segment.nameIndex != taxicore::city::format::kNoName && !data.name(segment.nameIndex).empty())
            byName[segment.nameIndex].push_back(s);
    }
    std::vector<NamedStreet> streets;
    std::vector<char> used(data.segments.size(), 0);
    for (const auto &[nameIndex, pieces] : byName) {
        const std::string_view name = data.name(nameIndex);
        std::unordered_map<uint32_t, std::vector<uint32_t>> atNode;
        for (const uint32_t s : pieces) {
            atNode[data.segments[s].from].push_back(s);
            atNode[data.segments[s].to].push_back(s);
        }
        const auto unusedAt = [&](uint32_t node) -> int64_t {
            for (const uint32_t s : atNode[node]) {
                if (!used[s])
                    return s;
            }
            return -1;
        };
        // Start chains at ends and forks first, so that a street is one chain where it can be.
        std::vector<uint32_t> starts;
        for (const uint32_t s : pieces) {
            if (atNode[data.segments[s].from].size() != 2 || atNode[data.segments[s].to].size() != 2)
                starts.insert(starts.begin(), s);
            else
                starts.push_back(s);
        }
        for (const uint32_t start : starts) {
            if (used[start])
                continue;
            NamedStreet street;
            street.name = QString::fromUtf8(name.data(), qsizetype(name.size()));
            int rank = 2;
            // Walk forwards from the start piece's end that is not shared, if any.
            const auto &first = data.segments[start];
            uint32_t node = atNode[first.from].size() == 1 || atNode[first.from].size() > 2 ? first.from : first.to;
            for (int64_t s = start; s >= 0; s = unusedAt(node)) {
                used[size_t(s)] = 1;
                const auto &segment = data.segments[size_t(s)];
                rank = std::min(rank, rankOf(taxicore::city::RoadClass(segment.roadClass)));
                const auto shape = data.shape(uint32_t(s));
                const bool forward = segment.from == node;
                for (size_t i = 0; i < shape.size(); ++i) {
                    const auto c = shape[forward ? i : shape.size() - 1 - i];
                    const auto geo = taxicore::city::CityData::geo(c);
                    const QPointF p = projection.toMetres(geo.lat, geo.lng);
                    if (street.points.empty() || street.points.back() != p)
                        street.points.push_back(p);
                }
                node = forward ? segment.to : segment.from;
                if (atNode[node].size() > 2)
                    break; // a fork: each branch is its own chain
            }
            if (street.points.size() < 2)
                continue;
            street.rank = rank;
            double minX = street.points[0].x(), maxX = minX, minY = street.points[0].y(), maxY = minY;
            for (const QPointF &p : street.points) {
                minX = std::min(minX, p.x());
                maxX = std::max(maxX, p.x());
                minY = std::min(minY, p.y());
                maxY = std::max(maxY, p.y());
            }
            street.bounds = QRectF(QPointF(minX, minY), QPointF(maxX, maxY));
            streets.push_back(std::move(street));
        }
    }
    return streets;
}
