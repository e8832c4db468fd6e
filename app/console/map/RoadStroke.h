#pragma once

#include <QPointF>
#include <vector>

// One polyline the map draws under the cars, in projected metres. The kind decides width and
// colour, so the map's style lives in one place (RoadLayer) whatever the data source.
struct RoadStroke {
    enum class Kind { Grid, Boundary, Major, Minor, Link, Service };
    Kind kind = Kind::Minor;
    std::vector<QPointF> points;
};
