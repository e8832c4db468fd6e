#pragma once

#include "RoadStroke.h"
#include "StreetLabels.h"

#include <vector>

class MapProjection;

namespace taxicore::city {
class City;
}

// Where the map's strokes come from: the city's streets, or the city's bounding box and a
// 0.01° graticule while no city is loaded, so that the operator still sees where cars are.
class CityRoads {
public:
    // The bundled city's area (central Gothenburg), as the server's simulator uses it.
    static constexpr double kSouth = 57.65, kNorth = 57.76, kWest = 11.86, kEast = 12.09;
    static constexpr double kGridStepDeg = 0.01;

    static std::vector<RoadStroke> graticule(const MapProjection &projection);
    // Every road segment of the city, classed for drawing (motorway → Major, service → Service...).
    static std::vector<RoadStroke> streets(const taxicore::city::City &city, const MapProjection &projection);
    // The named streets, each road piece joined to the next of the same name where they meet
    // (so a label can run across intersections), for StreetLabels.
    static std::vector<NamedStreet> namedStreets(const taxicore::city::City &city, const MapProjection &projection);
};
