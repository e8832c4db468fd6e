#pragma once

#include "fleet/CarState.h"

#include <QPointF>

// What the map keeps of a car between frames: enough to draw it and to hit-test a click.
struct CarMarker {
    int id = 0;
    QPointF metres;
    float heading = 0; // degrees clockwise from north
    taxicore::CarState state = taxicore::CarState::Offline;
};
