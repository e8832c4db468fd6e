#include "engine/Histogram.h"

#include <QTest>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

using taxicore::bench::Histogram;

namespace {

constexpr double kMaxRelativeError = 0.01; // the bound: 1 %
constexpr int64_t kOneMicrosecondNs = 1'000;
constexpr int64_t kSixtySecondsNs = 60'000'000'000;

double relativeError(double measured, double exact)
{
    return std::abs(measured - exact) / exact;
}

// The exact value at percentile p of sorted samples, with the same rank rule as the histogram.
int64_t exactPercentile(const std::vector<int64_t> &sorted, double percentile)
{
    const auto rank = std::max<std::size_t>(
        1, static_cast<std::size_t>(std::ceil(percentile / 100.0 * static_cast<double>(sorted.size()))));
    return sorted[rank - 1];
}

void checkPercentilesAgainstExact(std::vector<int64_t> samples)
{
    Histogram histogram;
    for (const int64_t v : samples)
        histogram.record(v);
    std::sort(samples.begin(), samples.end());
    for (const double p : {50.0, 90.0, 95.0, 99.0, 99.9}) {
        const auto exact = static_cast<double>(exactPercentile(samples, p));
        const auto measured = static_cast<double>(histogram.valueAtPercentile(p));
        QVERIFY2(relativeError(measured, exact) <= kMaxRelativeError,
                 qPrintable(QStringLiteral("p%1: %2 vs exact %3").arg(p).arg(measured).arg(exact)));
    }
    QCOMPARE(histogram.max(), samples.back());
    QCOMPARE(histogram.min(), samples.front());
    QCOMPARE(histogram.count(), static_cast<uint64_t>(samples.size()));
}

} // namespace

class HistogramTest : public QObject {
    Q_OBJECT

private slots:
    void everyValueFromOneMicrosecondToSixtySecondsIsWithinOnePercent()
    {
        // Walk the range geometrically, densely enough to hit every bucket width.
        double worst = 0;
        for (double v = kOneMicrosecondNs; v <= static_cast<double>(kSixtySecondsNs); v *= 1.0007) {
            const auto value = static_cast<uint64_t>(v);
            const auto representative = static_cast<double>(Histogram::bucketMidpoint(Histogram::bucketIndex(value)));
            worst = std::max(worst, relativeError(representative, static_cast<double>(value)));
        }
        QVERIFY2(worst <= kMaxRelativeError, qPrintable(QString::number(worst)));
    }

    void bucketsTileTheRangeWithoutGaps()
    {
        for (std::size_t i = 1; i < Histogram::kBucketCount; ++i)
            QCOMPARE(Histogram::bucketLowerBound(i),
                     Histogram::bucketLowerBound(i - 1) + Histogram::bucketWidth(i - 1));
        QVERIFY(Histogram::bucketIndex(kSixtySecondsNs) < Histogram::kBucketCount);
    }

    void percentilesOfAUniformDistributionAreWithinOnePercent()
    {
        std::mt19937_64 random(42);
        std::uniform_int_distribution<int64_t> latency(kOneMicrosecondNs, 100'000'000);
        std::vector<int64_t> samples(200'000);
        std::generate(samples.begin(), samples.end(), [&] { return latency(random); });
        checkPercentilesAgainstExact(samples);
    }

    void percentilesOfALogNormalDistributionAreWithinOnePercent()
    {
        // Heavy-tailed like real latencies: median ~1 ms, tail into seconds.
        std::mt19937_64 random(7);
        std::lognormal_distribution<double> latency(std::log(1e6), 1.5);
        std::vector<int64_t> samples(200'000);
        std::generate(samples.begin(), samples.end(), [&] {
            return std::clamp<int64_t>(static_cast<int64_t>(latency(random)), kOneMicrosecondNs, kSixtySecondsNs);
        });
        checkPercentilesAgainstExact(samples);
    }

    void meanIsExact()
    {
        Histogram histogram;
        histogram.record(1'000);
        histogram.record(3'000);
        histogram.recordCount(5'000, 2);
        QCOMPARE(histogram.mean(), 3'500.0);
    }

    void mergedHistogramsEqualOneHistogramOfAllValues()
    {
        Histogram a, b, all;
        for (int64_t v = 1; v < 2'000'000; v += 997) {
            (v % 2 ? a : b).record(v);
            all.record(v);
        }
        a.merge(b);
        QCOMPARE(a.count(), all.count());
        QCOMPARE(a.min(), all.min());
        QCOMPARE(a.max(), all.max());
        for (const double p : {1.0, 50.0, 99.0, 100.0})
            QCOMPARE(a.valueAtPercentile(p), all.valueAtPercentile(p));
    }

    void sinceGivesOnlyTheNewValues()
    {
        Histogram histogram;
        for (int i = 0; i < 1000; ++i)
            histogram.record(1'000'000); // 1 ms
        const Histogram earlier = histogram.snapshot();
        for (int i = 0; i < 10; ++i)
            histogram.record(500'000'000); // 500 ms
        const Histogram interval = histogram.since(earlier);
        QCOMPARE(interval.count(), uint64_t{10});
        QVERIFY(relativeError(static_cast<double>(interval.valueAtPercentile(50)), 5e8) <= kMaxRelativeError);
    }

    void valuesAboveTheRangeAreClampedNotLost()
    {
        Histogram histogram;
        histogram.record(int64_t{1} << 40);
        histogram.record(-5);
        QCOMPARE(histogram.count(), uint64_t{2});
        QCOMPARE(static_cast<uint64_t>(histogram.max()), Histogram::kMaxTrackableNs);
        QCOMPARE(histogram.min(), int64_t{0});
    }
};

QTEST_GUILESS_MAIN(HistogramTest)
#include "bench_histogram_test.moc"
