#pragma once

#include "RoadStroke.h"

#include <vector>

class MapProjection;

// Where the map's strokes come from. Until the city library lands this is the city's bounding
// box and a 0.01° graticule, so that the operator still sees where the cars are.
class CityRoads
{
public:
    // The bundled city's area (central Gothenburg), as the server's simulator uses it.
    static constexpr double kSouth = 57.65, kNorth = 57.76, kWest = 11.86, kEast = 12.09;
    static constexpr double kGridStepDeg = 0.01;

    static std::vector<RoadStroke> graticule(const MapProjection &projection);
};
