#pragma once

#include "CarMarker.h"

#include <QColor>
#include <QSGGeometryNode>
#include <array>
#include <vector>

class MapViewport;

// Every car as an arrow-shaped triangle on a lighter halo, in one geometry node rewritten each
// frame in screen coordinates (markers keep their pixel size at any zoom; when zoomed out the
// map counts cars in ClusterLayer instead). 10,000 cars = 60,000 vertices.
class CarLayer : public QSGGeometryNode {
public:
    static constexpr double kLengthPx = 14;
    static constexpr double kWidthPx = 10;
    static constexpr double kHaloPx = 1.6; // the halo's margin around the arrow

    // One colour per CarState value (Offline, Available, ToPickup, OnTrip).
    using Palette = std::array<QColor, 5>; // by CarState: offline, available, to pickup, on trip, waiting

    CarLayer();
    void update(const std::vector<CarMarker> &cars, const MapViewport &viewport, const Palette &palette, QColor halo);
};
