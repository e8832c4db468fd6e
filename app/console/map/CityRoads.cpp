#include "CityRoads.h"

#include "MapProjection.h"

#include "city/City.h"

#include <cmath>

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
