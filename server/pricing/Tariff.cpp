#include "pricing/Tariff.h"

#include <algorithm>
#include <cmath>

namespace taxicore {

namespace {
double roundToCents(double value)
{
    return std::round(value * 100.0) / 100.0;
}
} // namespace

FareBreakdown computeFare(const Tariff &tariff, double distanceM, double durationS, double surge)
{
    FareBreakdown fare;
    fare.base = tariff.base;
    fare.distanceCharge = roundToCents(tariff.perKm * std::max(0.0, distanceM) / 1000.0);
    fare.timeCharge = roundToCents(tariff.perMinute * std::max(0.0, durationS) / 60.0);
    fare.minimum = tariff.minimum;
    fare.surge = surge;
    const double metered = fare.base + fare.distanceCharge + fare.timeCharge;
    fare.total = roundToCents(std::max(tariff.minimum, metered) * surge);
    return fare;
}

} // namespace taxicore
