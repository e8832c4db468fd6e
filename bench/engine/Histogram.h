#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace taxicore::bench {

// Latency histogram in nanoseconds with log-linear buckets (the HDR idea): values below
// kLinearLimit are exact; every power of two above is split into kSubBuckets linear buckets,
// so a bucket's midpoint is within 1/(2*kSubBuckets) = 0.4 % of any value in it. Memory is
// constant (kBucketCount counters), whatever the run length.
//
// One thread records; other threads may read a consistent-enough copy at any time with
// snapshot() (relaxed atomic loads and stores, no locks on the hot path).
class Histogram {
public:
    static constexpr int kSubBucketBits = 7;
    static constexpr uint64_t kSubBuckets = uint64_t{1} << kSubBucketBits;
    static constexpr uint64_t kLinearLimit = kSubBuckets;
    // Values are clamped below 2^37 ns (~137 s): comfortably above the 60 s requirement.
    static constexpr int kHighestPowerOfTwo = 36;
    static constexpr uint64_t kMaxTrackableNs = (uint64_t{1} << (kHighestPowerOfTwo + 1)) - 1;
    static constexpr std::size_t kBucketCount = kLinearLimit + (kHighestPowerOfTwo - kSubBucketBits + 1) * kSubBuckets;

    Histogram();

    void record(int64_t valueNs) { recordCount(valueNs, 1); }
    void recordCount(int64_t valueNs, uint64_t count);
    void merge(const Histogram &other);
    void reset();

    // A copy made with atomic loads: safe while the owning thread keeps recording.
    Histogram snapshot() const;
    // Counts recorded in this histogram but not in `earlier` (an older snapshot of it).
    Histogram since(const Histogram &earlier) const;

    uint64_t count() const { return m_count; }
    int64_t min() const { return m_count ? static_cast<int64_t>(m_min) : 0; }
    int64_t max() const { return static_cast<int64_t>(m_max); }
    double mean() const;
    double stddev() const;
    // The value at percentile p (0..100): the midpoint of the bucket holding that rank,
    // clamped to the recorded min and max.
    int64_t valueAtPercentile(double percentile) const;

    static std::size_t bucketIndex(uint64_t valueNs);
    static uint64_t bucketLowerBound(std::size_t index);
    static uint64_t bucketWidth(std::size_t index);
    static uint64_t bucketMidpoint(std::size_t index);
    uint64_t countAt(std::size_t index) const { return m_counts[index]; }

private:
    std::vector<uint64_t> m_counts;
    uint64_t m_count = 0;
    uint64_t m_min = UINT64_MAX;
    uint64_t m_max = 0;
    // Sums in double: 2^53 ns of total latency would overflow no faster than integer sums and
    // the mean only needs relative precision.
    double m_sum = 0;
    double m_sumSquares = 0;
};

} // namespace taxicore::bench
