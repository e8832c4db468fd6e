#pragma once

#include "CarMarker.h"

#include <QPointF>
#include <cstdint>
#include <vector>

// Where each car has been: its last kPoints positions, one every kSampleMs, for every car (so
// a car clicked now shows its trail at once). Floats in one flat ring buffer: 10,000 cars cost
// under 5 MB and one pass a second.
class CarTrails {
public:
    static constexpr int kPoints = 60;
    static constexpr int64_t kSampleMs = 1000;
    // A jump longer than this between two samples (a car placed anew) starts a new trail.
    static constexpr double kMaxStepM = 500;

    // Records the cars' positions if kSampleMs have passed since the last record.
    void record(const std::vector<CarMarker> &cars, int64_t nowMs);
    // The car's positions, oldest first (metres); empty for an unknown car.
    std::vector<QPointF> trailOf(int carId) const;
    void clear();

private:
    struct Point {
        float x, y;
    };
    std::vector<Point> m_points;   // kPoints per car id, a ring per car
    std::vector<uint8_t> m_counts; // by car id
    int m_head = 0;                // the ring slot the next record writes
    int64_t m_lastMs = INT64_MIN;
};
