#include "city/WayRules.h"

#include <array>
#include <cctype>
#include <charconv>
#include <string>

namespace taxicore::city {

namespace {
constexpr double kKmhPerMph = 1.609344;
constexpr double kKmhPerKnot = 1.852;
constexpr double kMinSpeedKmh = 3;
constexpr double kMaxSpeedKmh = 250;

struct NamedSpeed {
    std::string_view value;
    double kmh;
};
// Implicit limits: Sweden (the bundled city) and the generic walk value.
constexpr std::array<NamedSpeed, 6> kNamedSpeeds = {{
    {"se:urban", 50},
    {"se:rural", 70},
    {"se:motorway", 110},
    {"se:living_street", 7},
    {"walk", 7},
    {"living_street", 7},
}};

std::string lowercase(std::string_view text)
{
    std::string result(text);
    for (char &c : result)
        c = char(std::tolower(static_cast<unsigned char>(c)));
    return result;
}

std::string_view trimmed(std::string_view text)
{
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
        text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
        text.remove_suffix(1);
    return text;
}

bool isOneOf(std::string_view value, std::initializer_list<std::string_view> options)
{
    for (std::string_view option : options) {
        if (value == option)
            return true;
    }
    return false;
}
} // namespace

std::optional<double> parseMaxspeedKmh(std::string_view maxspeed)
{
    const std::string text = lowercase(trimmed(maxspeed.substr(0, maxspeed.find(';'))));
    for (const NamedSpeed &named : kNamedSpeeds) {
        if (text == named.value)
            return named.kmh;
    }
    double number = 0;
    const char *begin = text.data();
    const char *end = text.data() + text.size();
    const auto [rest, error] = std::from_chars(begin, end, number);
    if (error != std::errc() || rest == begin)
        return std::nullopt;
    const std::string_view unit = trimmed(std::string_view(rest, size_t(end - rest)));
    double kmh = 0;
    if (unit.empty() || isOneOf(unit, {"km/h", "kmh", "kph"}))
        kmh = number;
    else if (unit == "mph")
        kmh = number * kKmhPerMph;
    else if (unit == "knots")
        kmh = number * kKmhPerKnot;
    else
        return std::nullopt;
    if (kmh < kMinSpeedKmh || kmh > kMaxSpeedKmh)
        return std::nullopt;
    return kmh;
}

TravelDirection parseOneway(std::string_view oneway, bool impliedOneway)
{
    const std::string value = lowercase(trimmed(oneway));
    if (isOneOf(value, {"yes", "1", "true"}))
        return TravelDirection::Forward;
    if (isOneOf(value, {"-1", "reverse"}))
        return TravelDirection::Backward;
    if (isOneOf(value, {"no", "0", "false"}))
        return TravelDirection::Both;
    if (isOneOf(value, {"reversible", "alternating"}))
        return TravelDirection::None;
    return impliedOneway ? TravelDirection::Forward : TravelDirection::Both;
}

bool carAccessAllowed(std::string_view access, std::string_view motorVehicle, std::string_view motorcar)
{
    // The most specific tag present decides.
    for (std::string_view tag : {motorcar, motorVehicle, access}) {
        const std::string value = lowercase(trimmed(tag));
        if (value.empty())
            continue;
        return !isOneOf(value, {"no", "private", "agricultural", "forestry", "delivery"});
    }
    return true;
}

std::optional<DrivableWay> classifyWay(const RawWay &way)
{
    const std::optional<RoadClass> roadClass = drivableRoadClass(way.highway);
    if (!roadClass || way.area == "yes")
        return std::nullopt;
    if (!carAccessAllowed(way.access, way.motorVehicle, way.motorcar))
        return std::nullopt;
    if (*roadClass == RoadClass::Service && isOneOf(way.service, {"emergency_access"}))
        return std::nullopt;
    const bool roundabout = isOneOf(way.junction, {"roundabout", "circular"});
    const TravelDirection direction = parseOneway(way.oneway, roundabout || impliesOneway(*roadClass));
    if (direction == TravelDirection::None)
        return std::nullopt;
    const double speed = parseMaxspeedKmh(way.maxspeed).value_or(defaultSpeedKmh(*roadClass));
    return DrivableWay{*roadClass, direction, speed};
}

} // namespace taxicore::city
