#pragma once
// The OpenStreetMap highway classes a car may drive, and their default speeds.

#include <cstdint>
#include <optional>
#include <string_view>

namespace taxicore::city {

enum class RoadClass : uint8_t {
    Motorway,
    Trunk,
    Primary,
    Secondary,
    Tertiary,
    Unclassified,
    Residential,
    LivingStreet,
    Service,
    MotorwayLink,
    TrunkLink,
    PrimaryLink,
    SecondaryLink,
    TertiaryLink,
    Road, // "highway=road": unknown classification, mapped but not yet surveyed
};
inline constexpr int kRoadClassCount = 15;

// The class of a drivable highway tag value; nullopt for anything a car does not use
// (footway, cycleway, path, steps, pedestrian, track, bridleway, construction, platform ...).
std::optional<RoadClass> drivableRoadClass(std::string_view highway);

std::string_view roadClassName(RoadClass roadClass);

// Speed when a way has no usable maxspeed tag (km/h; from OSRM's car profile).
double defaultSpeedKmh(RoadClass roadClass);

// OpenStreetMap implies oneway=yes on motorways and their links.
bool impliesOneway(RoadClass roadClass);

} // namespace taxicore::city
