#include "CityRoads.h"

#include "MapProjection.h"

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
        strokes.push_back({RoadStroke::Kind::Grid, {projection.toMetres(kSouth, lng), projection.toMetres(kNorth, lng)}});
    }
    strokes.push_back({RoadStroke::Kind::Boundary,
                       {projection.toMetres(kNorth, kWest), projection.toMetres(kNorth, kEast),
                        projection.toMetres(kSouth, kEast), projection.toMetres(kSouth, kWest),
                        projection.toMetres(kNorth, kWest)}});
    return strokes;
}
