#pragma once
// One OpenStreetMap way as an importer reads it, before any filtering.

#include "city/CityFormat.h"

#include <cstdint>
#include <string>
#include <vector>

namespace taxicore::city {

struct RawWay {
    // Identity of each point: the OSM node id, or (GeoJSON has none) the packed coordinate, so
    // ways meeting at exactly the same coordinate share a node.
    std::vector<uint64_t> nodeKeys;
    std::vector<format::Coord> points;
    std::string highway;
    std::string name;
    std::string oneway;
    std::string maxspeed;
    std::string junction;
    std::string access;
    std::string motorVehicle;
    std::string motorcar;
    std::string service;
    std::string area;
};

inline uint64_t coordinateNodeKey(format::Coord c)
{
    return (uint64_t(uint32_t(c.lat)) << 32) | uint32_t(c.lng);
}

} // namespace taxicore::city
