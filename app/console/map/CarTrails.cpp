#include "CarTrails.h"

#include <algorithm>
#include <cmath>

void CarTrails::record(const std::vector<CarMarker> &cars, int64_t nowMs)
{
    if (m_lastMs != INT64_MIN && nowMs - m_lastMs < kSampleMs)
        return;
    m_lastMs = nowMs;
    int maxId = 0;
    for (const auto &car : cars)
        maxId = std::max(maxId, car.id);
    if (size_t(maxId) + 1 > m_counts.size()) {
        m_counts.resize(size_t(maxId) + 1, 0);
        m_points.resize(m_counts.size() * kPoints);
    }
    const int previous = (m_head + kPoints - 1) % kPoints;
    std::vector<uint8_t> seen(m_counts.size(), 0);
    for (const auto &car : cars) {
        if (car.id <= 0)
            continue;
        seen[size_t(car.id)] = 1;
        const size_t base = size_t(car.id) * kPoints;
        uint8_t &count = m_counts[size_t(car.id)];
        if (count > 0) {
            const Point last = m_points[base + size_t(previous)];
            if (std::hypot(car.metres.x() - last.x, car.metres.y() - last.y) > kMaxStepM)
                count = 0; // teleported (a new run, a car placed anew): its old trail is not its path
        }
        m_points[base + size_t(m_head)] = {float(car.metres.x()), float(car.metres.y())};
        count = uint8_t(std::min(int(count) + 1, kPoints));
    }
    // A car missing from this record has a gap in its ring: its trail starts again.
    for (size_t id = 0; id < seen.size(); ++id) {
        if (!seen[id])
            m_counts[id] = 0;
    }
    m_head = (m_head + 1) % kPoints;
}

std::vector<QPointF> CarTrails::trailOf(int carId) const
{
    if (carId <= 0 || size_t(carId) >= m_counts.size())
        return {};
    const int count = m_counts[size_t(carId)];
    std::vector<QPointF> out;
    out.reserve(size_t(count));
    const size_t base = size_t(carId) * kPoints;
    for (int i = count; i >= 1; --i) {
        const Point p = m_points[base + size_t((m_head - i + kPoints) % kPoints)];
        out.emplace_back(p.x, p.y);
    }
    return out;
}

void CarTrails::clear()
{
    m_points.clear();
    m_counts.clear();
    m_head = 0;
    m_lastMs = INT64_MIN;
}
