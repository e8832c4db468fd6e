#pragma once
// On-disk layout of a TaxiCore city file (*.taxicity). Every section is a flat array of the
// trivially-copyable records below, 8-byte aligned, so a loader maps the file and reads it in
// place. Little-endian only (the header carries a byte-order mark). See server/city/README.md.

#include <array>
#include <cstdint>

namespace taxicore::city::format {

inline constexpr std::array<char, 8> kMagic = {'T', 'X', 'C', 'I', 'T', 'Y', '\r', '\n'};
inline constexpr uint32_t kVersion = 1;
inline constexpr uint32_t kByteOrderMark = 0x01020304;
inline constexpr uint32_t kSectionAlignment = 8;

inline constexpr uint32_t kNoName = 0xFFFFFFFFu;          // Segment::nameIndex of an unnamed road
inline constexpr uint32_t kNotAllowed = 0xFFFFFFFFu;      // Segment::*Ms of a forbidden direction
inline constexpr uint32_t kOriginalArcFlag = 0x80000000u; // ChArc::via holds a SegmentRef

// Limits the loader enforces so that no count or weight in a hostile file can overflow.
inline constexpr uint32_t kMaxNodes = 50'000'000;
inline constexpr uint32_t kMaxArcWeightMs = 24u * 3600u * 1000u;
inline constexpr uint32_t kMaxGridCells = 16'000'000;

struct Coord { // 1e-7 degree units
    int32_t lat;
    int32_t lng;
};

// A piece of road between two graph nodes (intersections or dead ends), drawn by its shape.
struct Segment {
    uint32_t from;
    uint32_t to;
    uint32_t nameIndex; // or kNoName
    float lengthM;
    uint32_t forwardMs;  // travel time from -> to, or kNotAllowed (one-way)
    uint32_t backwardMs; // travel time to -> from, or kNotAllowed
    uint8_t roadClass;   // RoadClass
    uint8_t speedKmh;
    uint16_t reserved;
};
static_assert(sizeof(Segment) == 28);

// SegmentRef = segment index << 1 | 1 when the arc runs the segment backwards (to -> from).
struct Arc {
    uint32_t head;
    uint32_t weightMs;
    uint32_t segmentRef;
};
static_assert(sizeof(Arc) == 12);

// Contraction-hierarchy arc. Up arcs of u lead to higher-ranked heads (forward search); down
// arcs of u are stored reversed: head is the higher-ranked tail of an arc head -> u.
// via: kOriginalArcFlag | SegmentRef for a road arc, else the contracted middle node.
struct ChArc {
    uint32_t head;
    uint32_t weightMs;
    uint32_t via;
};
static_assert(sizeof(ChArc) == 12);

struct GridItem { // one straight piece of a segment's shape: points piece, piece + 1
    uint32_t segment;
    uint32_t piece;
};

enum Section : uint32_t {
    NodeCoords,      // Coord[nodeCount]
    Segments,        // Segment[segmentCount]
    ShapeFirst,      // uint32[segmentCount + 1] into ShapePoints
    ShapePoints,     // Coord[shapePointCount], each shape starts and ends at its nodes
    ArcFirst,        // uint32[nodeCount + 1] into Arcs (outgoing)
    Arcs,            // Arc[arcCount]
    ReverseArcFirst, // uint32[nodeCount + 1] into ReverseArcs (incoming, head = tail)
    ReverseArcs,     // Arc[arcCount]
    UpFirst,         // uint32[nodeCount + 1]
    UpArcs,          // ChArc[upArcCount]
    DownFirst,       // uint32[nodeCount + 1]
    DownArcs,        // ChArc[downArcCount]
    NameFirst,       // uint32[nameCount + 1] into NameBytes
    NameBytes,       // UTF-8, not terminated
    GridCellFirst,   // uint32[gridRows * gridColumns + 1] into GridItems
    GridItems,       // GridItem[gridItemCount]
    SectionCount
};

struct SectionEntry {
    uint64_t offset;
    uint64_t size;
};

struct Header {
    std::array<char, 8> magic;
    uint32_t version;
    uint32_t byteOrderMark;
    uint64_t fileSize;
    uint64_t checksum; // Checksum of the whole file with this field read as zero
    uint32_t headerSize;
    uint32_t sectionCount;
    uint32_t nodeCount;
    uint32_t segmentCount;
    uint32_t shapePointCount;
    uint32_t arcCount;
    uint32_t upArcCount;
    uint32_t downArcCount;
    uint32_t nameCount;
    uint32_t nameByteCount;
    uint32_t gridRows;
    uint32_t gridColumns;
    uint32_t gridItemCount;
    uint32_t reserved;
    Coord boundsMin;
    Coord boundsMax;
    Coord gridOrigin;
    Coord gridCellSize; // cell height (lat) and width (lng)
    std::array<SectionEntry, SectionCount> sections;
};
inline constexpr uint64_t kChecksumOffset = 24; // offsetof(Header, checksum)

} // namespace taxicore::city::format
