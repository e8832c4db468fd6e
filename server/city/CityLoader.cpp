#include "city/CityLoader.h"

#include "city/Checksum.h"
#include "city/RoadClass.h"

#include <QFileInfo>
#include <cmath>
#include <cstring>

namespace taxicore::city {

namespace {
using format::Header;

constexpr int32_t kMaxLatUnits = 90 * 10'000'000;
constexpr int32_t kMaxLngUnits = 180 * 10'000'000;

class Validator {
public:
    Validator(const uchar *bytes, uint64_t size, CityData &data)
        : m_bytes(bytes)
        , m_size(size)
        , m_data(data)
    {
    }

    QString run()
    {
        if (m_size < sizeof(Header))
            return QStringLiteral("truncated: %1 bytes, the header alone needs %2").arg(m_size).arg(sizeof(Header));
        std::memcpy(&m_header, m_bytes, sizeof(Header));
        if (m_header.magic != format::kMagic)
            return QStringLiteral("not a TaxiCore city file (bad magic)");
        if (m_header.byteOrderMark != format::kByteOrderMark)
            return QStringLiteral("written with another byte order");
        if (m_header.version != format::kVersion)
            return QStringLiteral("unsupported version %1 (this build reads version %2)")
                .arg(m_header.version)
                .arg(format::kVersion);
        if (m_header.headerSize != sizeof(Header) || m_header.sectionCount != format::SectionCount)
            return QStringLiteral("header size or section count does not match version %1").arg(format::kVersion);
        if (m_header.fileSize != m_size)
            return QStringLiteral("truncated or padded: header says %1 bytes, the file has %2")
                .arg(m_header.fileSize)
                .arg(m_size);
        if (cityChecksum(m_bytes, m_size, format::kChecksumOffset) != m_header.checksum)
            return QStringLiteral("checksum mismatch (the file is corrupt)");
        m_data.header = reinterpret_cast<const Header *>(m_bytes);
        if (QString error = checkCounts(); !error.isEmpty())
            return error;
        if (QString error = mapSections(); !error.isEmpty())
            return error;
        return checkContents();
    }

private:
    QString checkCounts() const
    {
        const Header &h = m_header;
        if (h.nodeCount == 0 || h.nodeCount > format::kMaxNodes || h.segmentCount > format::kMaxNodes * 4u
            || h.shapePointCount > format::kMaxNodes * 8u || h.arcCount > format::kMaxNodes * 8u
            || h.upArcCount > format::kMaxNodes * 8u || h.downArcCount > format::kMaxNodes * 8u
            || h.nameCount > format::kMaxNodes || h.gridItemCount > format::kMaxNodes * 16u)
            return QStringLiteral("counts out of range");
        if (h.gridRows == 0 || h.gridColumns == 0 || uint64_t(h.gridRows) * h.gridColumns > format::kMaxGridCells
            || h.gridCellSize.lat <= 0 || h.gridCellSize.lng <= 0)
            return QStringLiteral("spatial grid dimensions out of range");
        return {};
    }

    template <typename T>
    QString view(format::Section section, uint64_t count, std::span<const T> &out, const char *what)
    {
        const format::SectionEntry entry = m_header.sections[section];
        if (entry.offset < sizeof(Header) || entry.offset % alignof(T) != 0 || entry.offset > m_size
            || entry.size > m_size - entry.offset)
            return QStringLiteral("section %1 lies outside the file").arg(QLatin1String(what));
        if (entry.size != count * sizeof(T))
            return QStringLiteral("section %1 has %2 bytes, its count needs %3")
                .arg(QLatin1String(what))
                .arg(entry.size)
                .arg(count * sizeof(T));
        out = std::span<const T>(reinterpret_cast<const T *>(m_bytes + entry.offset), count);
        return {};
    }

    QString mapSections()
    {
        const Header &h = m_header;
        const uint64_t cells = uint64_t(h.gridRows) * h.gridColumns;
        QString errors[] = {
            view(format::NodeCoords, h.nodeCount, m_data.nodes, "nodes"),
            view(format::Segments, h.segmentCount, m_data.segments, "segments"),
            view(format::ShapeFirst, h.segmentCount + 1ull, m_data.shapeFirst, "shape index"),
            view(format::ShapePoints, h.shapePointCount, m_data.shapePoints, "shape points"),
            view(format::ArcFirst, h.nodeCount + 1ull, m_data.arcFirst, "arc index"),
            view(format::Arcs, h.arcCount, m_data.arcs, "arcs"),
            view(format::ReverseArcFirst, h.nodeCount + 1ull, m_data.reverseArcFirst, "reverse arc index"),
            view(format::ReverseArcs, h.arcCount, m_data.reverseArcs, "reverse arcs"),
            view(format::UpFirst, h.nodeCount + 1ull, m_data.upFirst, "upward arc index"),
            view(format::UpArcs, h.upArcCount, m_data.upArcs, "upward arcs"),
            view(format::DownFirst, h.nodeCount + 1ull, m_data.downFirst, "downward arc index"),
            view(format::DownArcs, h.downArcCount, m_data.downArcs, "downward arcs"),
            view(format::NameFirst, h.nameCount + 1ull, m_data.nameFirst, "name index"),
            view(format::NameBytes, h.nameByteCount, m_data.nameBytes, "names"),
            view(format::GridCellFirst, cells + 1, m_data.gridCellFirst, "grid index"),
            view(format::GridItems, h.gridItemCount, m_data.gridItems, "grid items"),
        };
        for (const QString &error : errors) {
            if (!error.isEmpty())
                return error;
        }
        return {};
    }

    static bool validIndex(std::span<const uint32_t> first, size_t itemCount)
    {
        if (first.empty() || first.front() != 0 || first.back() != itemCount)
            return false;
        for (size_t i = 1; i < first.size(); ++i) {
            if (first[i] < first[i - 1])
                return false;
        }
        return true;
    }

    static bool validCoord(format::Coord c)
    {
        return c.lat >= -kMaxLatUnits && c.lat <= kMaxLatUnits && c.lng >= -kMaxLngUnits && c.lng <= kMaxLngUnits;
    }

    static bool validWeight(uint32_t ms) { return ms <= format::kMaxArcWeightMs; }

    bool validSegmentRef(uint32_t ref) const { return (ref >> 1) < m_header.segmentCount; }

    bool validArcs(std::span<const format::Arc> arcs) const
    {
        for (const format::Arc &arc : arcs) {
            if (arc.head >= m_header.nodeCount || !validWeight(arc.weightMs) || !validSegmentRef(arc.segmentRef))
                return false;
        }
        return true;
    }

    bool validChArcs(std::span<const format::ChArc> arcs) const
    {
        for (const format::ChArc &arc : arcs) {
            const bool original = (arc.via & format::kOriginalArcFlag) != 0;
            const bool validVia =
                original ? validSegmentRef(arc.via & ~format::kOriginalArcFlag) : arc.via < m_header.nodeCount;
            if (arc.head >= m_header.nodeCount || !validWeight(arc.weightMs) || !validVia)
                return false;
        }
        return true;
    }

    bool validSegments() const
    {
        const CityData &d = m_data;
        for (const format::Segment &s : d.segments) {
            if (s.from >= m_header.nodeCount || s.to >= m_header.nodeCount)
                return false;
            if (s.nameIndex != format::kNoName && s.nameIndex >= m_header.nameCount)
                return false;
            if (s.roadClass >= kRoadClassCount || !std::isfinite(s.lengthM) || s.lengthM < 0)
                return false;
            if ((s.forwardMs != format::kNotAllowed && !validWeight(s.forwardMs))
                || (s.backwardMs != format::kNotAllowed && !validWeight(s.backwardMs)))
                return false;
        }
        for (size_t s = 0; s < d.segments.size(); ++s) {
            if (d.shapeFirst[s + 1] - d.shapeFirst[s] < 2)
                return false;
        }
        return true;
    }

    bool validGrid() const
    {
        for (const format::GridItem &item : m_data.gridItems) {
            if (item.segment >= m_header.segmentCount)
                return false;
            const uint32_t points = m_data.shapeFirst[item.segment + 1] - m_data.shapeFirst[item.segment];
            if (item.piece + 1 >= points)
                return false;
        }
        return true;
    }

    QString checkContents() const
    {
        const CityData &d = m_data;
        if (!validIndex(d.shapeFirst, d.shapePoints.size()) || !validIndex(d.arcFirst, d.arcs.size())
            || !validIndex(d.reverseArcFirst, d.reverseArcs.size()) || !validIndex(d.upFirst, d.upArcs.size())
            || !validIndex(d.downFirst, d.downArcs.size()) || !validIndex(d.nameFirst, d.nameBytes.size())
            || !validIndex(d.gridCellFirst, d.gridItems.size()))
            return QStringLiteral("an index section is not monotonic or does not match its count");
        for (const format::Coord c : d.nodes)
            if (!validCoord(c))
                return QStringLiteral("node coordinates out of range");
        for (const format::Coord c : d.shapePoints)
            if (!validCoord(c))
                return QStringLiteral("shape coordinates out of range");
        if (!validSegments())
            return QStringLiteral("a segment refers to a missing node, name or shape, or has a bad weight");
        if (!validArcs(d.arcs) || !validArcs(d.reverseArcs))
            return QStringLiteral("an arc refers to a missing node or segment, or has a bad weight");
        if (!validChArcs(d.upArcs) || !validChArcs(d.downArcs))
            return QStringLiteral("a hierarchy arc refers to a missing node or segment, or has a bad weight");
        if (!validGrid())
            return QStringLiteral("a spatial grid item refers to a missing segment piece");
        return {};
    }

    const uchar *m_bytes;
    uint64_t m_size;
    CityData &m_data;
    Header m_header{};
};
} // namespace

QString mapCityFile(QFile &file, CityData &data)
{
    const QString path = file.fileName();
    if (!QFileInfo::exists(path))
        return QStringLiteral("%1: no such file").arg(path);
    if (!file.open(QIODevice::ReadOnly))
        return QStringLiteral("%1: cannot open: %2").arg(path, file.errorString());
    const qint64 size = file.size();
    if (size < qint64(sizeof(Header)))
        return QStringLiteral("%1: truncated: %2 bytes, the header alone needs %3")
            .arg(path)
            .arg(size)
            .arg(sizeof(Header));
    const uchar *bytes = file.map(0, size);
    if (!bytes)
        return QStringLiteral("%1: cannot map: %2").arg(path, file.errorString());
    CityData candidate;
    const QString error = Validator(bytes, uint64_t(size), candidate).run();
    if (!error.isEmpty()) {
        file.unmap(const_cast<uchar *>(bytes));
        return QStringLiteral("%1: %2").arg(path, error);
    }
    data = candidate;
    return {};
}

} // namespace taxicore::city
