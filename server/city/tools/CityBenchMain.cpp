// taxicore-city-bench [CITY] [--pairs N] [--one-query]: routing micro-benchmark on one core.
// Measures load time and resident memory of a loaded city, snapping, route queries (p50/p99,
// queries/s) and one-to-many ETAs. --one-query runs a single route (for callgrind). Not a test.

#include "city/City.h"

#include <QCoreApplication>
#include <QFile>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <queue>
#include <sched.h>
#include <time.h>

using namespace taxicore::city;
using Clock = std::chrono::steady_clock;

namespace {
constexpr int kDefaultPairs = 20000;
constexpr int kSnapQueries = 20000;
constexpr int kEtaTargets = 1000;
constexpr int kEtaSources = 50;
constexpr double kEtaMaxSeconds = 900;
constexpr uint64_t kSeed = 2016;
constexpr int kBaselinePairs = 1000;
constexpr int kFleetSources = 1000;
constexpr int kFleetTargets = 200;

long residentKiB()
{
    QFile status(QStringLiteral("/proc/self/status"));
    if (!status.open(QIODevice::ReadOnly))
        return -1;
    for (const QByteArray &line : status.readAll().split('\n')) {
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').first().toLong();
    }
    return -1;
}

double micros(Clock::duration d)
{
    return std::chrono::duration<double, std::micro>(d).count();
}

// CPU time of this thread: on a shared machine it leaves out the time the thread was preempted.
double threadCpuMicros()
{
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return now.tv_sec * 1e6 + now.tv_nsec / 1e3;
}

struct Summary {
    double mean, p50, p99, max;
};

Summary summarise(std::vector<double> samples)
{
    std::sort(samples.begin(), samples.end());
    const auto at = [&](double q) { return samples[std::min(samples.size() - 1, size_t(q * samples.size()))]; };
    return {std::accumulate(samples.begin(), samples.end(), 0.0) / samples.size(), at(0.50), at(0.99), samples.back()};
}

void print(const char *what, const Summary &s)
{
    std::printf("%-28s mean %8.2f us  p50 %8.2f us  p99 %8.2f us  max %8.2f us\n", what, s.mean, s.p50, s.p99, s.max);
}

// Baseline for comparison: plain Dijkstra over the road arcs from the start segment's end
// nodes until both end nodes of the target segment are settled (what the hierarchy replaces).
double plainDijkstraMs(const CityData &data, const RoadPoint &from, const RoadPoint &to)
{
    std::vector<double> dist(data.nodes.size(), INFINITY);
    using Entry = std::pair<double, uint32_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
    const format::Segment &a = data.segments[from.segment];
    const format::Segment &b = data.segments[to.segment];
    for (const uint32_t node : {a.from, a.to}) {
        dist[node] = 0;
        queue.emplace(0, node);
    }
    int targetsLeft = b.from == b.to ? 1 : 2;
    while (!queue.empty() && targetsLeft > 0) {
        const auto [d, node] = queue.top();
        queue.pop();
        if (d > dist[node])
            continue;
        targetsLeft -= (node == b.from || node == b.to) ? 1 : 0;
        for (const format::Arc &arc : data.outgoing(node)) {
            if (d + arc.weightMs < dist[arc.head]) {
                dist[arc.head] = d + arc.weightMs;
                queue.emplace(dist[arc.head], arc.head);
            }
        }
    }
    return std::min(dist[b.from], dist[b.to]);
}

void pinToOneCore()
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        std::printf("(could not pin to one core)\n");
}
} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QString path = QStringLiteral(TAXICORE_SOURCE_DIR "/resources/cities/gothenburg.taxicity");
    int pairs = kDefaultPairs;
    bool oneQuery = false;
    const QStringList args = app.arguments();
    for (int i = 1; i < args.size(); ++i) {
        if (args[i] == QLatin1String("--pairs") && i + 1 < args.size())
            pairs = std::max(1, args[++i].toInt());
        else if (args[i] == QLatin1String("--one-query"))
            oneQuery = true;
        else
            path = args[i];
    }
    pinToOneCore();

    const long rssBefore = residentKiB();
    const Clock::time_point loadStart = Clock::now();
    const CityLoadResult loaded = City::load(path);
    const double loadMs = micros(Clock::now() - loadStart) / 1000;
    if (!loaded.city) {
        std::fprintf(stderr, "taxicore-city-bench: %s\n", qPrintable(loaded.error));
        return 1;
    }
    const City &city = *loaded.city;
    const long rssLoaded = residentKiB();

    std::mt19937_64 rng(kSeed);
    if (oneQuery) {
        const RoadPoint from = city.randomRoadPoint(rng);
        const RoadPoint to = city.randomRoadPoint(rng);
        const Route route = city.route(from, to);
        std::printf("one query: %.0f m, %.1f s, %zu points\n", route.distanceM, route.durationS, route.polyline.size());
        return route.found ? 0 : 1;
    }

    std::printf("city %s: %zu nodes, %zu segments, %zu bytes\n", qPrintable(path), city.data().nodes.size(),
                city.data().segments.size(), city.fileBytes());
    std::printf("load (map + validate + checksum) %.2f ms, RSS +%ld KiB after load\n", loadMs, rssLoaded - rssBefore);

    const GeoBounds b = city.bounds();
    std::uniform_real_distribution<double> lat(b.min.lat, b.max.lat), lng(b.min.lng, b.max.lng);
    std::vector<double> samples;
    std::vector<RoadPoint> points;
    for (int i = 0; i < kSnapQueries; ++i) {
        const GeoPoint p{lat(rng), lng(rng)};
        const Clock::time_point start = Clock::now();
        points.push_back(city.snap(p));
        samples.push_back(micros(Clock::now() - start));
    }
    print("snap (random coordinate)", summarise(samples));

    while (points.size() < size_t(2 * pairs))
        points.push_back(city.randomRoadPoint(rng));
    samples.clear();
    std::vector<double> cpuSamples;
    double totalKm = 0;
    int notFound = 0;
    const Clock::time_point routesStart = Clock::now();
    for (int i = 0; i < pairs; ++i) {
        const double cpuStart = threadCpuMicros();
        const Clock::time_point start = Clock::now();
        const Route route = city.route(points[2 * i], points[2 * i + 1]);
        samples.push_back(micros(Clock::now() - start));
        cpuSamples.push_back(threadCpuMicros() - cpuStart);
        totalKm += route.distanceM / 1000;
        notFound += route.found ? 0 : 1;
    }
    const double routeSeconds = micros(Clock::now() - routesStart) / 1e6;
    print("route (with polyline)", summarise(samples));
    print("route, thread CPU time", summarise(cpuSamples));
    std::printf("route throughput %.0f queries/s over %d pairs (mean %.2f km, %d not found)\n", pairs / routeSeconds,
                pairs, totalKm / pairs, notFound);

    samples.clear();
    double sink = 0;
    for (int i = 0; i < kBaselinePairs; ++i) {
        const Clock::time_point start = Clock::now();
        sink += plainDijkstraMs(city.data(), points[2 * i], points[2 * i + 1]);
        samples.push_back(micros(Clock::now() - start));
    }
    print("baseline: plain Dijkstra", summarise(samples));

    samples.clear();
    cpuSamples.clear();
    for (int t = 0; t < kEtaTargets; ++t) {
        const RoadPoint target = city.randomRoadPoint(rng);
        std::vector<RoadPoint> sources;
        for (int s = 0; s < kEtaSources; ++s)
            sources.push_back(city.randomRoadPoint(rng));
        const double cpuStart = threadCpuMicros();
        const Clock::time_point start = Clock::now();
        const std::vector<double> etas = city.etaTo(target, sources, kEtaMaxSeconds);
        samples.push_back(micros(Clock::now() - start));
        cpuSamples.push_back(threadCpuMicros() - cpuStart);
    }
    print("etaTo, 50 sources, <= 900 s", summarise(samples));
    print("etaTo, thread CPU time", summarise(cpuSamples));

    samples.clear();
    std::vector<RoadPoint> fleet;
    for (int s = 0; s < kFleetSources; ++s)
        fleet.push_back(city.randomRoadPoint(rng));
    for (int t = 0; t < kFleetTargets; ++t) {
        const RoadPoint target = city.randomRoadPoint(rng);
        const double cpuStart = threadCpuMicros();
        const std::vector<double> etas = city.etaTo(target, fleet, kEtaMaxSeconds);
        samples.push_back(threadCpuMicros() - cpuStart);
    }
    print("etaTo, 1000 sources (CPU)", summarise(samples));

    const Clock::time_point mapStart = Clock::now();
    const qsizetype mapBytes = city.mapJson().size();
    const double mapMs = micros(Clock::now() - mapStart) / 1000;
    std::printf("map JSON %lld bytes (zlib level 9: %lld bytes) built in %.1f ms\n", qlonglong(mapBytes),
                qlonglong(qCompress(city.mapJson(), 9).size()), mapMs);
    std::printf("(checksum of baseline costs %.0f)\n", sink);
    std::printf("RSS +%ld KiB after all queries (mapped file, search buffers, map JSON)\n", residentKiB() - rssBefore);
    return 0;
}
