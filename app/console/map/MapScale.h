#pragma once

#include <QString>

// The scale bar's length: the longest "nice" distance (1, 2 or 5 × 10ⁿ metres) that fits in
// the room the bar has, so that it reads like a paper map's and changes in steps with the zoom.
struct ScaleBarChoice {
    double metres = 0;
    double px = 0;
    QString label; // "200 m", "1 km", "20 km"
};

namespace MapScale {
ScaleBarChoice choose(double metresPerPixel, double maxWidthPx);
QString distanceLabel(double metres);
} // namespace MapScale
