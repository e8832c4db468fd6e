#pragma once

#include "CarMarker.h"

#include <QPointF>
#include <QString>
#include <array>
#include <vector>

class MapViewport;

// Cars seen from far away: the visible ones grouped by square cells of the map, each cell one
// counted circle. Cells are aligned to the map, not to the window, so that panning does not
// move cars from one count to another. A circle stays inside its cell, so circles never overlap.
struct CarCluster {
    QPointF screen; // the centre of the circle, px
    double radius = 0;
    int count = 0;
    std::array<int, 5> byState{}; // cars per CarState
    int carId = 0;                // the car of a one-car cell
    size_t carIndex = 0;          // its index in the cars given to build()
};

namespace CarClusters {
inline constexpr double kCellPx = 64;      // a cell's side on screen
inline constexpr double kMinRadiusPx = 11; // a circle for 2 cars: room for two digits
inline constexpr double kRadiusPerDecadePx = 3.5;
inline constexpr double kCellGapPx = 2; // between a circle and its cell's edge

// The cells of `viewport` holding at least one car, each with its count and counts by state.
std::vector<CarCluster> build(const std::vector<CarMarker> &cars, const MapViewport &viewport, double cellPx = kCellPx);
// The circle's radius for `count` cars: grows with the count's number of digits, fits the cell.
double radiusFor(int count, double cellPx = kCellPx);
// What the circle says: "37", "999", "1.2k", "12k".
QString countLabel(int count);
} // namespace CarClusters
