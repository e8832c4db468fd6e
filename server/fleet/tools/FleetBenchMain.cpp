// taxicore-fleet-bench [CITY] [--cars N] [--queries N]: fleet micro-benchmark on one core, on the
// shared region the server uses. Measures GET /api/v1/cars/nearby's search (FleetStore::nearby,
// radius 1 km, 20 nearest) with N cars spread over the city's roads, the road ETAs of its answer
// (from the cars' stored road places, and from fresh snaps as before they were stored), and the
// surge update the primary runs once per simulated second (count per cell + smoothing + publish).
// Not a test.

#include "city/City.h"
#include "dispatch/FleetSimulator.h"
#include "fleet/SharedMemoryFleet.h"
#include "region/SharedRegion.h"
#include "pricing/RoadTripEstimator.h"
#include "pricing/SurgePublisher.h"

#include <QCoreApplication>
#include <QStringList>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <random>
#include <sched.h>
#include <time.h>

using namespace taxicore;
using Clock = std::chrono::steady_clock;

namespace {

constexpr int kDefaultCars = 10'000;
constexpr int kDefaultQueries = 20'000;
constexpr int kSurgeUpdates = 200;
constexpr int kEtaQueries = 2000; // each costs ~20 ETA searches: fewer than the searches alone
constexpr double kRadiusM = 1000;
constexpr int kLimit = 20;
constexpr uint64_t kSeed = 2016;

// CPU time of this thread: on a shared machine it leaves out the time the thread was preempted.
double threadCpuMicros()
{
    timespec now{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    return double(now.tv_sec) * 1e6 + double(now.tv_nsec) / 1e3;
}

void report(const char *what, std::vector<double> samples)
{
    std::sort(samples.begin(), samples.end());
    const auto at = [&](double q) { return samples[std::min(samples.size() - 1, std::size_t(q * samples.size()))]; };
    std::printf("%-34s mean %8.2f us  p50 %8.2f us  p99 %8.2f us  max %8.2f us\n", what,
                std::accumulate(samples.begin(), samples.end(), 0.0) / double(samples.size()), at(0.5), at(0.99),
                samples.back());
}

} // namespace

int main(int argc, char *argv[])
{
    QCoreApplication app(argc, argv);
    QString cityPath = QStringLiteral(TAXICORE_SOURCE_DIR "/resources/cities/gothenburg.taxicity");
    int cars = kDefaultCars, queries = kDefaultQueries;
    const QStringList args = app.arguments();
    for (int i = 1; i < args.size(); ++i) {
        if (args[i] == QLatin1String("--cars") && i + 1 < args.size())
            cars = std::clamp(args[++i].toInt(), 1, kMaxCars);
        else if (args[i] == QLatin1String("--queries") && i + 1 < args.size())
            queries = std::max(1, args[++i].toInt());
        else
            cityPath = args[i];
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        std::printf("(could not pin to one core)\n");

    const city::CityLoadResult loaded = city::City::load(cityPath);
    if (!loaded.city) {
        std::fprintf(stderr, "taxicore-fleet-bench: %s\n", qPrintable(loaded.error));
        return 2;
    }
    QString error;
    const auto region = SharedRegion::create(error);
    if (!region) {
        std::fprintf(stderr, "taxicore-fleet-bench: %s\n", qPrintable(error));
        return 1;
    }
    SharedMemoryFleet fleet(*region);
    fleet.locateOnRoads(loaded.city); // as the server's simulator has it: each car's road place stored
    std::mt19937_64 random(kSeed);
    fleet.initialiseCars(cars, [&](int) { return FleetSimulator::randomPointIn(loaded.city.get(), random); });
    std::printf("%d cars on %s\n", cars, qPrintable(cityPath));

    std::vector<double> nearby, nearbyCpu;
    nearby.reserve(std::size_t(queries));
    nearbyCpu.reserve(std::size_t(queries));
    std::size_t found = 0;
    for (int i = 0; i < queries; ++i) {
        const LatLng at = FleetSimulator::randomPointIn(loaded.city.get(), random);
        const double cpu = threadCpuMicros();
        const auto start = Clock::now();
        found += fleet.nearby(at, kRadiusM, kLimit).size();
        nearby.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
        nearbyCpu.push_back(threadCpuMicros() - cpu);
    }
    report("nearby (1 km, 20 nearest)", nearby);
    report("nearby, thread CPU time", nearbyCpu);
    std::printf("  %.1f cars found per query on average\n", double(found) / queries);

    // Nearby's road ETAs for the answer, as GET /api/v1/cars/nearby computes them.
    const RoadTripEstimator estimator(*loaded.city);
    std::vector<double> fromPlaces, fromSnaps;
    for (int i = 0; i < std::min(queries, kEtaQueries); ++i) {
        const LatLng at = FleetSimulator::randomPointIn(loaded.city.get(), random);
        const std::vector<NearbyCar> answer = fleet.nearby(at, kRadiusM, kLimit);
        std::vector<LatLng> positions;
        for (const NearbyCar &n : answer)
            positions.push_back(n.car.position);
        double cpu = threadCpuMicros();
        estimator.carEtasTo(at, answer);
        fromPlaces.push_back(threadCpuMicros() - cpu);
        cpu = threadCpuMicros();
        estimator.etasTo(at, positions);
        fromSnaps.push_back(threadCpuMicros() - cpu);
    }
    report("road ETAs from stored places, CPU", fromPlaces);
    report("road ETAs snapping each car, CPU", fromSnaps);

    const city::GeoBounds b = loaded.city->bounds();
    SurgePublisher surge(
        fleet, SurgeGrid::covering({b.min.lat, b.min.lng}, {b.max.lat, b.max.lng}, SurgeGrid::kCellM, kMaxSurgeCells));
    std::vector<double> updates;
    for (int i = 0; i < kSurgeUpdates; ++i) {
        const double cpu = threadCpuMicros();
        surge.update(1.0);
        updates.push_back(threadCpuMicros() - cpu);
    }
    std::printf("surge grid %d x %d cells\n", surge.model().grid().rows, surge.model().grid().cols);
    report("surge update, thread CPU time", updates);
    return 0;
}
