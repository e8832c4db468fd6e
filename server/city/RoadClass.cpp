#include "city/RoadClass.h"

#include <array>

namespace taxicore::city {

namespace {
struct RoadClassInfo {
    std::string_view highway;
    double defaultSpeedKmh;
};

// Indexed by RoadClass.
constexpr std::array<RoadClassInfo, kRoadClassCount> kRoadClasses = {{
    {"motorway", 90},
    {"trunk", 85},
    {"primary", 65},
    {"secondary", 55},
    {"tertiary", 40},
    {"unclassified", 25},
    {"residential", 25},
    {"living_street", 10},
    {"service", 15},
    {"motorway_link", 45},
    {"trunk_link", 40},
    {"primary_link", 30},
    {"secondary_link", 25},
    {"tertiary_link", 20},
    {"road", 20},
}};
} // namespace

std::optional<RoadClass> drivableRoadClass(std::string_view highway)
{
    for (int i = 0; i < kRoadClassCount; ++i) {
        if (kRoadClasses[i].highway == highway)
            return static_cast<RoadClass>(i);
    }
    return std::nullopt;
}

std::string_view roadClassName(RoadClass roadClass)
{
    return kRoadClasses[static_cast<int>(roadClass) % kRoadClassCount].highway;
}

double defaultSpeedKmh(RoadClass roadClass)
{
    return kRoadClasses[static_cast<int>(roadClass) % kRoadClassCount].defaultSpeedKmh;
}

bool impliesOneway(RoadClass roadClass)
{
    return roadClass == RoadClass::Motorway || roadClass == RoadClass::MotorwayLink;
}

} // namespace taxicore::city
