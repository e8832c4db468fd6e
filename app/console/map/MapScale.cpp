#include "MapScale.h"

#include <array>
#include <cmath>

namespace MapScale {

ScaleBarChoice choose(double metresPerPixel, double maxWidthPx)
{
    if (!(metresPerPixel > 0) || !(maxWidthPx > 0) || !std::isfinite(metresPerPixel))
        return {};
    const double room = metresPerPixel * maxWidthPx; // metres the bar may span at most
    double decade = std::pow(10.0, std::floor(std::log10(room)));
    double best = 0;
    // Steps of 5, 2, 1 in the room's decade; the decade below if rounding left none.
    for (int pass = 0; pass < 2 && best == 0; ++pass, decade /= 10) {
        for (const double step : std::array{5.0, 2.0, 1.0}) {
            if (step * decade <= room * (1 + 1e-9)) {
                best = step * decade;
                break;
            }
        }
    }
    return {best, best / metresPerPixel, distanceLabel(best)};
}

QString distanceLabel(double metres)
{
    if (metres >= 1000)
        return QStringLiteral("%1 km").arg(metres / 1000, 0, 'g', 6);
    return QStringLiteral("%1 m").arg(metres, 0, 'g', 6);
}

} // namespace MapScale
