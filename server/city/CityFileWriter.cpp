#include "city/CityFileWriter.h"

#include "city/Checksum.h"
#include "city/SpatialGridBuilder.h"

#include <QSaveFile>
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>

namespace taxicore::city {

namespace {
static_assert(offsetof(format::Header, checksum) == format::kChecksumOffset);

struct Csr {
    std::vector<uint32_t> first;
    std::vector<format::Arc> arcs;
};

// Road arcs grouped by tail (outgoing) or by head (incoming, head field = tail).
Csr roadArcs(const RoadGraph &graph, bool incoming)
{
    std::vector<std::pair<uint32_t, format::Arc>> keyed;
    for (uint32_t s = 0; s < graph.segments.size(); ++s) {
        const RoadSegment &segment = graph.segments[s];
        if (segment.from == segment.to)
            continue;
        if (segment.forwardMs != format::kNotAllowed) {
            keyed.push_back(incoming ? std::pair{segment.to, format::Arc{segment.from, segment.forwardMs, s << 1}}
                                     : std::pair{segment.from, format::Arc{segment.to, segment.forwardMs, s << 1}});
        }
        if (segment.backwardMs != format::kNotAllowed) {
            keyed.push_back(incoming
                                ? std::pair{segment.from, format::Arc{segment.to, segment.backwardMs, s << 1 | 1}}
                                : std::pair{segment.to, format::Arc{segment.from, segment.backwardMs, s << 1 | 1}});
        }
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto &a, const auto &b) { return a.first < b.first; });
    Csr csr;
    csr.first.assign(graph.nodes.size() + 1, 0);
    for (const auto &[node, arc] : keyed) {
        ++csr.first[node + 1];
        csr.arcs.push_back(arc);
    }
    for (size_t i = 0; i < graph.nodes.size(); ++i)
        csr.first[i + 1] += csr.first[i];
    return csr;
}

class SectionWriter {
public:
    SectionWriter() { m_bytes.resize(sizeof(format::Header)); }

    template <typename T> void add(format::Section section, const std::vector<T> &items)
    {
        while (m_bytes.size() % format::kSectionAlignment != 0)
            m_bytes.append('\0');
        m_header.sections[section] = {uint64_t(m_bytes.size()), uint64_t(items.size() * sizeof(T))};
        m_bytes.append(reinterpret_cast<const char *>(items.data()), qsizetype(items.size() * sizeof(T)));
    }

    format::Header &header() { return m_header; }

    QByteArray finish()
    {
        m_header.magic = format::kMagic;
        m_header.version = format::kVersion;
        m_header.byteOrderMark = format::kByteOrderMark;
        m_header.fileSize = uint64_t(m_bytes.size());
        m_header.headerSize = sizeof(format::Header);
        m_header.sectionCount = format::SectionCount;
        m_header.checksum = 0;
        std::memcpy(m_bytes.data(), &m_header, sizeof m_header);
        const uint64_t checksum = cityChecksum(reinterpret_cast<const unsigned char *>(m_bytes.constData()),
                                               size_t(m_bytes.size()), format::kChecksumOffset);
        std::memcpy(m_bytes.data() + format::kChecksumOffset, &checksum, sizeof checksum);
        return m_bytes;
    }

private:
    format::Header m_header{};
    QByteArray m_bytes;
};

void computeBounds(const RoadGraph &graph, format::Coord &min, format::Coord &max)
{
    min = {INT32_MAX, INT32_MAX};
    max = {INT32_MIN, INT32_MIN};
    for (const RoadSegment &segment : graph.segments) {
        for (const format::Coord c : segment.shape) {
            min = {std::min(min.lat, c.lat), std::min(min.lng, c.lng)};
            max = {std::max(max.lat, c.lat), std::max(max.lng, c.lng)};
        }
    }
    if (graph.segments.empty())
        min = max = {0, 0};
}
} // namespace

QByteArray serializeCity(const RoadGraph &graph, const ContractionHierarchy &hierarchy)
{
    SectionWriter writer;
    format::Header &header = writer.header();
    computeBounds(graph, header.boundsMin, header.boundsMax);

    std::vector<format::Segment> segments;
    std::vector<uint32_t> shapeFirst{0};
    std::vector<format::Coord> shapePoints;
    for (const RoadSegment &s : graph.segments) {
        segments.push_back({s.from, s.to, s.nameIndex, float(s.lengthM), s.forwardMs, s.backwardMs,
                            uint8_t(s.roadClass), uint8_t(std::clamp(s.speedKmh + 0.5, 1.0, 255.0)), 0});
        shapePoints.insert(shapePoints.end(), s.shape.begin(), s.shape.end());
        shapeFirst.push_back(uint32_t(shapePoints.size()));
    }
    const Csr outgoing = roadArcs(graph, false);
    const Csr incoming = roadArcs(graph, true);
    std::vector<uint32_t> nameFirst{0};
    std::vector<char> nameBytes;
    for (const std::string &name : graph.names) {
        nameBytes.insert(nameBytes.end(), name.begin(), name.end());
        nameFirst.push_back(uint32_t(nameBytes.size()));
    }
    const SpatialGrid grid = buildSpatialGrid(graph, header.boundsMin, header.boundsMax);

    header.nodeCount = uint32_t(graph.nodes.size());
    header.segmentCount = uint32_t(segments.size());
    header.shapePointCount = uint32_t(shapePoints.size());
    header.arcCount = uint32_t(outgoing.arcs.size());
    header.upArcCount = uint32_t(hierarchy.upArcs.size());
    header.downArcCount = uint32_t(hierarchy.downArcs.size());
    header.nameCount = uint32_t(graph.names.size());
    header.nameByteCount = uint32_t(nameBytes.size());
    header.gridRows = grid.rows;
    header.gridColumns = grid.columns;
    header.gridItemCount = uint32_t(grid.items.size());
    header.gridOrigin = grid.origin;
    header.gridCellSize = grid.cellSize;

    writer.add(format::NodeCoords, graph.nodes);
    writer.add(format::Segments, segments);
    writer.add(format::ShapeFirst, shapeFirst);
    writer.add(format::ShapePoints, shapePoints);
    writer.add(format::ArcFirst, outgoing.first);
    writer.add(format::Arcs, outgoing.arcs);
    writer.add(format::ReverseArcFirst, incoming.first);
    writer.add(format::ReverseArcs, incoming.arcs);
    writer.add(format::UpFirst, hierarchy.upFirst);
    writer.add(format::UpArcs, hierarchy.upArcs);
    writer.add(format::DownFirst, hierarchy.downFirst);
    writer.add(format::DownArcs, hierarchy.downArcs);
    writer.add(format::NameFirst, nameFirst);
    writer.add(format::NameBytes, nameBytes);
    writer.add(format::GridCellFirst, grid.cellFirst);
    writer.add(format::GridItems, grid.items);
    return writer.finish();
}

QString writeCityFile(const QString &path, const QByteArray &bytes)
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly))
        return QStringLiteral("%1: cannot write: %2").arg(path, file.errorString());
    if (file.write(bytes) != bytes.size() || !file.commit())
        return QStringLiteral("%1: cannot write: %2").arg(path, file.errorString());
    return {};
}

} // namespace taxicore::city
