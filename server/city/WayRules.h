#pragma once
// Which ways a car may drive, in which direction and how fast: the tag rules of the importer.

#include "city/RawWay.h"
#include "city/RoadClass.h"

#include <optional>
#include <string_view>

namespace taxicore::city {

enum class TravelDirection { Both, Forward, Backward, None };

struct DrivableWay {
    RoadClass roadClass;
    TravelDirection direction;
    double speedKmh;
};

// "50", "50 km/h", "30 mph", "20 knots", "SE:urban", "walk", "50;30" (first wins); nullopt for
// "none", "signals", "variable" and anything unreadable (the class default applies).
std::optional<double> parseMaxspeedKmh(std::string_view maxspeed);

// yes/1/true -> Forward, -1/reverse -> Backward, no/0/false -> Both, reversible/alternating ->
// None (cannot be routed reliably); empty -> Forward when implied (roundabouts, motorways).
TravelDirection parseOneway(std::string_view oneway, bool impliedOneway);

// access/motor_vehicle/motorcar: a more specific tag overrides a general one.
bool carAccessAllowed(std::string_view access, std::string_view motorVehicle, std::string_view motorcar);

// nullopt when a car may not use the way at all.
std::optional<DrivableWay> classifyWay(const RawWay &way);

} // namespace taxicore::city
