#pragma once

#include "CarMarker.h"

#include <QColor>
#include <QSGGeometryNode>
#include <array>
#include <vector>

class MapViewport;

// Every car as one arrow-shaped triangle in one geometry node, rewritten each frame in screen
// coordinates (markers keep their pixel size at any zoom). 10,000 cars = 30,000 vertices.
class CarLayer : public QSGGeometryNode {
public:
    static constexpr double kLengthPx = 13;
    static constexpr double kWidthPx = 9;
    static constexpr double kFullSizeScale = 0.15; // px per metre from which arrows are full size
    static constexpr double kMinSizeFactor = 0.5;

    // One colour per CarState value (Offline, Available, ToPickup, OnTrip).
    using Palette = std::array<QColor, 5>; // by CarState: offline, available, to pickup, on trip, waiting

    CarLayer();
    void update(const std::vector<CarMarker> &cars, const MapViewport &viewport, const Palette &palette);
};
