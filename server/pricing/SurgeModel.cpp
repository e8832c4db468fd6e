#include "pricing/SurgeModel.h"

#include <algorithm>
#include <cmath>

namespace taxicore {

namespace {
constexpr double kMetresPerDegreeLat = 111'195.0;
constexpr double kPi = 3.141592653589793;
} // namespace

SurgeGrid SurgeGrid::covering(LatLng southWest, LatLng northEast, double cellM, int maxCells)
{
    SurgeGrid g;
    g.south = southWest.lat;
    g.west = southWest.lng;
    const double midLat = (southWest.lat + northEast.lat) / 2;
    const double heightM = std::max(1.0, (northEast.lat - southWest.lat) * kMetresPerDegreeLat);
    const double widthM =
        std::max(1.0, (northEast.lng - southWest.lng) * kMetresPerDegreeLat * std::cos(midLat * kPi / 180));
    double cell = std::max(1.0, cellM);
    // Grow the cells until the grid fits.
    while (std::ceil(heightM / cell) * std::ceil(widthM / cell) > maxCells)
        cell *= 1.25;
    g.rows = int(std::ceil(heightM / cell));
    g.cols = int(std::ceil(widthM / cell));
    g.cellLatDeg = cell / kMetresPerDegreeLat;
    g.cellLngDeg = cell / (kMetresPerDegreeLat * std::cos(midLat * kPi / 180));
    return g;
}

int SurgeGrid::cellOf(LatLng p) const
{
    if (rows <= 0 || cols <= 0 || !(cellLatDeg > 0) || !(cellLngDeg > 0))
        return -1;
    const double r = std::floor((p.lat - south) / cellLatDeg);
    const double c = std::floor((p.lng - west) / cellLngDeg);
    if (!(r >= 0 && r < rows && c >= 0 && c < cols))
        return -1;
    return int(r) * cols + int(c);
}

double surgeTarget(int openBookings, int availableCars, const Tariff &tariff)
{
    const double ratio = double(std::max(0, openBookings)) / double(std::max(1, availableCars));
    const double raw = 1.0 + tariff.surgePerExcess * std::max(0.0, ratio - 1.0);
    return std::clamp(raw, 1.0, std::max(1.0, tariff.surgeCap));
}

double smoothedSurge(double previous, double target, double elapsedS, double timeConstantS)
{
    if (timeConstantS <= 0)
        return target;
    const double keep = std::exp(-std::max(0.0, elapsedS) / timeConstantS);
    return target + (previous - target) * keep;
}

SurgeModel::SurgeModel(SurgeGrid grid)
    : m_grid(grid)
    , m_surge(std::size_t(std::max(0, grid.cellCount())), 1.0)
{
}

void SurgeModel::update(const std::vector<LatLng> &openPickups, const std::vector<LatLng> &availableCars,
                        const Tariff &tariff, double elapsedS)
{
    std::vector<int> open(m_surge.size(), 0), available(m_surge.size(), 0);
    for (const LatLng &p : openPickups)
        if (const int cell = m_grid.cellOf(p); cell >= 0)
            ++open[std::size_t(cell)];
    for (const LatLng &p : availableCars)
        if (const int cell = m_grid.cellOf(p); cell >= 0)
            ++available[std::size_t(cell)];
    for (std::size_t i = 0; i < m_surge.size(); ++i) {
        const double target = surgeTarget(open[i], available[i], tariff);
        // A lowered cap applies at once; smoothing only shapes the way there.
        m_surge[i] = std::min(std::max(1.0, tariff.surgeCap),
                              smoothedSurge(m_surge[i], target, elapsedS, tariff.surgeSmoothingS));
    }
}

double SurgeModel::surgeAt(LatLng p) const
{
    const int cell = m_grid.cellOf(p);
    return cell < 0 ? 1.0 : m_surge[std::size_t(cell)];
}

} // namespace taxicore
