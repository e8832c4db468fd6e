#pragma once

#include "fleet/FleetTypes.h"
#include "pricing/Tariff.h"

#include <vector>

namespace taxicore {

// The zones surge is computed for: a grid of about `cellM` square cells over a bounding box.
struct SurgeGrid {
    double south = 0, west = 0;
    double cellLatDeg = 0, cellLngDeg = 0;
    int rows = 0, cols = 0;

    static constexpr double kCellM = 500.0;
    // Covers [southWest, northEast] with cells of ~cellM (larger when more than maxCells would
    // be needed).
    static SurgeGrid covering(LatLng southWest, LatLng northEast, double cellM, int maxCells);
    int cellCount() const { return rows * cols; }
    // The cell holding `p`, or -1 outside the grid.
    int cellOf(LatLng p) const;
};

// The surge a cell is heading for: clamp(1 + k·max(0, open/max(1, available) − 1), 1, cap), with
// k = tariff.surgePerExcess and cap = tariff.surgeCap.
double surgeTarget(int openBookings, int availableCars, const Tariff &tariff);

// Exponential smoothing towards `target`: after `elapsedS` the gap shrinks by exp(−elapsedS/τ),
// τ = timeConstantS (0: jump at once).
double smoothedSurge(double previous, double target, double elapsedS, double timeConstantS);

// Per-cell surge over time: count open pickups and available cars per cell, then move each
// cell's surge towards its target. Pure; the primary's simulator feeds it and publishes it.
class SurgeModel {
public:
    explicit SurgeModel(SurgeGrid grid);

    void update(const std::vector<LatLng> &openPickups, const std::vector<LatLng> &availableCars, const Tariff &tariff,
                double elapsedS);
    const SurgeGrid &grid() const { return m_grid; }
    const std::vector<double> &surge() const { return m_surge; }
    double surgeAt(LatLng p) const;

private:
    SurgeGrid m_grid;
    std::vector<double> m_surge;
};

} // namespace taxicore
