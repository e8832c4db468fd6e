#include "CarClusters.h"

#include "MapViewport.h"

#include <algorithm>
#include <cmath>

namespace CarClusters {

double radiusFor(int count, double cellPx)
{
    const double r = kMinRadiusPx + kRadiusPerDecadePx * std::log10(std::max(1, count));
    return std::min(r, cellPx / 2 - kCellGapPx);
}

QString countLabel(int count)
{
    if (count < 1000)
        return QString::number(count);
    if (count < 10000)
        return QString::number(count / 1000.0, 'f', 1) + QLatin1Char('k');
    return QString::number(count / 1000) + QLatin1Char('k');
}

std::vector<CarCluster> build(const std::vector<CarMarker> &cars, const MapViewport &viewport, double cellPx)
{
    const double scale = viewport.scale();
    const double cellM = cellPx / scale;
    const QSizeF size = viewport.size();
    // Cell indices of the view's corners; one cell of margin catches circles cut by the edge.
    const QPointF topLeft = viewport.toMetres({0, 0});
    const QPointF bottomRight = viewport.toMetres({size.width(), size.height()});
    const auto firstCol = int64_t(std::floor(topLeft.x() / cellM)) - 1;
    const auto firstRow = int64_t(std::floor(topLeft.y() / cellM)) - 1;
    const auto cols = int64_t(std::floor(bottomRight.x() / cellM)) - firstCol + 2;
    const auto rows = int64_t(std::floor(bottomRight.y() / cellM)) - firstRow + 2;
    if (cols <= 0 || rows <= 0 || cols * rows > 1'000'000)
        return {};

    struct Cell {
        QPointF sum;
        int count = 0;
        std::array<int, 5> byState{};
        size_t first = 0;
    };
    std::vector<Cell> cells(size_t(cols * rows));
    for (size_t i = 0; i < cars.size(); ++i) {
        const QPointF m = cars[i].metres;
        const int64_t col = int64_t(std::floor(m.x() / cellM)) - firstCol;
        const int64_t row = int64_t(std::floor(m.y() / cellM)) - firstRow;
        if (col < 0 || row < 0 || col >= cols || row >= rows)
            continue;
        Cell &cell = cells[size_t(row * cols + col)];
        if (cell.count++ == 0)
            cell.first = i;
        cell.sum += m;
        const auto state = size_t(cars[i].state);
        ++cell.byState[state < cell.byState.size() ? state : 0];
    }

    std::vector<CarCluster> clusters;
    for (int64_t row = 0; row < rows; ++row) {
        for (int64_t col = 0; col < cols; ++col) {
            const Cell &cell = cells[size_t(row * cols + col)];
            if (cell.count == 0)
                continue;
            CarCluster c;
            c.count = cell.count;
            c.byState = cell.byState;
            c.radius = radiusFor(cell.count, cellPx);
            if (cell.count == 1) {
                c.carId = cars[cell.first].id;
                c.carIndex = cell.first;
            }
            // The cars' centroid, kept inside the cell (with its gap) so circles never touch.
            const QPointF cellMin((double(col + firstCol)) * cellM, (double(row + firstRow)) * cellM);
            const QPointF centroid = viewport.toScreen(cell.sum / cell.count);
            const QPointF lo = viewport.toScreen(cellMin);
            const double inset = c.radius + kCellGapPx;
            c.screen = {std::clamp(centroid.x(), lo.x() + inset, lo.x() + cellPx - inset),
                        std::clamp(centroid.y(), lo.y() + inset, lo.y() + cellPx - inset)};
            clusters.push_back(c);
        }
    }
    return clusters;
}

} // namespace CarClusters
