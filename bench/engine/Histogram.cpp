#include "Histogram.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>

namespace taxicore::bench {

namespace {

// Single-writer counters: the owner stores with relaxed atomics (a plain mov on x86), readers
// load with relaxed atomics, so a concurrent snapshot is free of data races.
template <typename T> void storeRelaxed(T &slot, T value)
{
    std::atomic_ref<T>(slot).store(value, std::memory_order_relaxed);
}

template <typename T> T loadRelaxed(const T &slot)
{
    return std::atomic_ref<T>(const_cast<T &>(slot)).load(std::memory_order_relaxed);
}

} // namespace

Histogram::Histogram()
    : m_counts(kBucketCount, 0)
{
}

std::size_t Histogram::bucketIndex(uint64_t valueNs)
{
    const uint64_t value = std::min(valueNs, kMaxTrackableNs);
    if (value < kLinearLimit)
        return static_cast<std::size_t>(value);
    const int powerOfTwo = std::bit_width(value) - 1;
    const int shift = powerOfTwo - kSubBucketBits;
    const uint64_t subBucket = (value >> shift) - kSubBuckets;
    return static_cast<std::size_t>(kLinearLimit + static_cast<uint64_t>(shift) * kSubBuckets + subBucket);
}

uint64_t Histogram::bucketLowerBound(std::size_t index)
{
    if (index < kLinearLimit)
        return index;
    const uint64_t offset = index - kLinearLimit;
    const uint64_t shift = offset / kSubBuckets;
    const uint64_t subBucket = offset % kSubBuckets;
    return (kSubBuckets + subBucket) << shift;
}

uint64_t Histogram::bucketWidth(std::size_t index)
{
    if (index < kLinearLimit)
        return 1;
    return uint64_t{1} << ((index - kLinearLimit) / kSubBuckets);
}

uint64_t Histogram::bucketMidpoint(std::size_t index)
{
    return bucketLowerBound(index) + (bucketWidth(index) - 1) / 2;
}

void Histogram::recordCount(int64_t valueNs, uint64_t count)
{
    const uint64_t value = valueNs < 0 ? 0 : std::min(static_cast<uint64_t>(valueNs), kMaxTrackableNs);
    uint64_t &bucket = m_counts[bucketIndex(value)];
    storeRelaxed(bucket, bucket + count);
    storeRelaxed(m_count, m_count + count);
    if (value < m_min)
        storeRelaxed(m_min, value);
    if (value > m_max)
        storeRelaxed(m_max, value);
    const double asDouble = static_cast<double>(value);
    storeRelaxed(m_sum, m_sum + asDouble * static_cast<double>(count));
    storeRelaxed(m_sumSquares, m_sumSquares + asDouble * asDouble * static_cast<double>(count));
}

void Histogram::merge(const Histogram &other)
{
    for (std::size_t i = 0; i < kBucketCount; ++i)
        m_counts[i] += other.m_counts[i];
    m_count += other.m_count;
    m_min = std::min(m_min, other.m_min);
    m_max = std::max(m_max, other.m_max);
    m_sum += other.m_sum;
    m_sumSquares += other.m_sumSquares;
}

void Histogram::reset()
{
    std::fill(m_counts.begin(), m_counts.end(), 0);
    m_count = 0;
    m_min = UINT64_MAX;
    m_max = 0;
    m_sum = 0;
    m_sumSquares = 0;
}

Histogram Histogram::snapshot() const
{
    Histogram copy;
    for (std::size_t i = 0; i < kBucketCount; ++i)
        copy.m_counts[i] = loadRelaxed(m_counts[i]);
    copy.m_count = loadRelaxed(m_count);
    copy.m_min = loadRelaxed(m_min);
    copy.m_max = loadRelaxed(m_max);
    copy.m_sum = loadRelaxed(m_sum);
    copy.m_sumSquares = loadRelaxed(m_sumSquares);
    return copy;
}

Histogram Histogram::since(const Histogram &earlier) const
{
    Histogram delta;
    uint64_t total = 0;
    for (std::size_t i = 0; i < kBucketCount; ++i) {
        const uint64_t n = m_counts[i] >= earlier.m_counts[i] ? m_counts[i] - earlier.m_counts[i] : 0;
        delta.m_counts[i] = n;
        total += n;
        if (n != 0) {
            delta.m_min = std::min(delta.m_min, bucketLowerBound(i));
            delta.m_max = std::max(delta.m_max, bucketLowerBound(i) + bucketWidth(i) - 1);
        }
    }
    delta.m_count = total;
    if (total != 0) {
        // The exact extremes of the interval are unknown; clamp to what the whole run saw.
        delta.m_min = std::max(delta.m_min, m_min);
        delta.m_max = std::min(delta.m_max, m_max);
    }
    delta.m_sum = std::max(0.0, m_sum - earlier.m_sum);
    delta.m_sumSquares = std::max(0.0, m_sumSquares - earlier.m_sumSquares);
    return delta;
}

double Histogram::mean() const
{
    return m_count ? m_sum / static_cast<double>(m_count) : 0.0;
}

double Histogram::stddev() const
{
    if (m_count < 2)
        return 0.0;
    const double average = mean();
    const double variance = m_sumSquares / static_cast<double>(m_count) - average * average;
    return variance > 0 ? std::sqrt(variance) : 0.0;
}

int64_t Histogram::valueAtPercentile(double percentile) const
{
    if (m_count == 0)
        return 0;
    const double clamped = std::clamp(percentile, 0.0, 100.0);
    const auto rank =
        std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(clamped / 100.0 * static_cast<double>(m_count))));
    uint64_t seen = 0;
    for (std::size_t i = 0; i < kBucketCount; ++i) {
        seen += m_counts[i];
        if (seen >= rank) {
            const uint64_t value = std::clamp(bucketMidpoint(i), m_min, m_max);
            return static_cast<int64_t>(value);
        }
    }
    return static_cast<int64_t>(m_max);
}

} // namespace taxicore::bench
