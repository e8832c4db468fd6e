// A car's device reports its position through a worker process (--mode processes): the position
// must be stored with its road place, the city's snap of it, as the simulator's moves are, so that
// nearby requests start that car's road ETA from the stored place instead of snapping the car
// again on every request (server/fleet/README.md, "Road places"). A worker whose fleet was never
// given the city stored such a report unlocated.
//
// The place is read where the server keeps it: its shared region, the memfd the primary holds
// open, found under /proc/<pid>/fd and mapped here through the project's own SharedRegion.

#include "RuntimeKit.h"

#include "city/City.h"
#include "fleet/SharedMemoryFleet.h"
#include "region/SharedRegion.h"

#include <QDir>
#include <fcntl.h>
#include <random>
#include <unistd.h>

using namespace taxicore;
using namespace taxicore::test;
using namespace taxicore::test::rt;

namespace {

const QString kCityPath = QStringLiteral(TAXICORE_SOURCE_DIR "/resources/cities/gothenburg.taxicity");
constexpr int kCars = 20;
constexpr int kCar = 7;

// The shared region of server process `pid`: the descriptor whose link names the memfd
// ("/memfd:taxicore-region (deleted)"). Opened read-write only because SharedRegion maps it so;
// this test only reads it (FleetStore::car).
std::unique_ptr<SharedRegion> attachRegionOf(qint64 pid, QString &error)
{
    const QDir fds(QStringLiteral("/proc/%1/fd").arg(pid));
    for (const QString &name : fds.entryList(QDir::AllEntries | QDir::System | QDir::NoDotAndDotDot)) {
        const QByteArray path = QFile::encodeName(fds.filePath(name));
        char target[256] = {};
        const ssize_t length = ::readlink(path.constData(), target, sizeof target - 1);
        if (length <= 0 || !QByteArray(target, length).startsWith("/memfd:taxicore-region"))
            continue;
        const int fd = ::open(path.constData(), O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            error = QStringLiteral("cannot open %1: %2").arg(QString::fromLocal8Bit(path), qt_error_string(errno));
            return nullptr;
        }
        auto region = SharedRegion::attach(fd, error); // owns fd from here
        if (!region)
            ::close(fd);
        return region;
    }
    error = QStringLiteral("process %1 holds no taxicore-region memfd").arg(pid);
    return nullptr;
}

qint64 requestsOf(const QJsonValue &slot)
{
    return qint64(slot.toObject().value(QStringLiteral("requests")).toDouble(-1));
}

} // namespace

class WorkerRoadPlaceTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void aPositionReportedThroughAWorkerIsStoredWithItsSnap();
};

void WorkerRoadPlaceTest::aPositionReportedThroughAWorkerIsStoredWithItsSnap()
{
    const city::CityLoadResult loaded = city::City::load(kCityPath);
    QVERIFY2(loaded.city, qPrintable(loaded.error));
    const city::City &city = *loaded.city;

    // One worker, so a request the primary did not serve was served by it. The simulator leaves a
    // device-driven car alone, and at this speed hardly moves the others.
    ServerProcess server({QStringLiteral("--mode"), QStringLiteral("processes"), QStringLiteral("--workers"),
                          QStringLiteral("1"), QStringLiteral("--cars"), QString::number(kCars),
                          QStringLiteral("--sim-speed"), QStringLiteral("0.001"), QStringLiteral("--city"), kCityPath});
    QVERIFY2(server.start(), qPrintable(server.error()));
    QVERIFY2(waitForWorkersTakingConnections(server, 1, 10'000), qPrintable(describeEvents(server)));

    // Beside a road rather than on it, so the snap has something to do.
    std::mt19937_64 random(2026);
    const city::RoadPoint road = city.randomRoadPoint(random);
    QVERIFY(road.valid);
    const LatLng reported{road.point.lat + 0.0002, road.point.lng + 0.0003};

    const QJsonObject before = getJson(server, "/admin/v1/workers");
    {
        // Loopback is trusted with the device's rights by default (docs/reference/access.md).
        HttpClient http(server.host(), server.port());
        const HttpResponse r = http.putJson("/api/v1/cars/" + QByteArray::number(kCar) + "/position",
                                            {{"lat", reported.lat}, {"lng", reported.lng}, {"speed_kmh", 25}});
        TC_VERIFY_STATUS(r, 200);
    }
    const QJsonObject after = getJson(server, "/admin/v1/workers");
    QVERIFY2(requestsOf(before.value("primary")) >= 0, QJsonDocument(before).toJson().constData());
    QVERIFY2(requestsOf(after.value("primary")) == requestsOf(before.value("primary")),
             "the primary served a request itself: " + QJsonDocument(after).toJson());
    const QJsonArray workersBefore = before.value("workers").toArray();
    const QJsonArray workersAfter = after.value("workers").toArray();
    QCOMPARE(workersAfter.size(), 1);
    QCOMPARE(workersBefore.size(), 1);
    QCOMPARE(workersAfter[0].toObject().value("pid"), workersBefore[0].toObject().value("pid"));
    QVERIFY(requestsOf(workersAfter[0]) > requestsOf(workersBefore[0]));

    QString error;
    const std::unique_ptr<SharedRegion> region = attachRegionOf(server.pid(), error);
    QVERIFY2(region, qPrintable(error));
    const SharedMemoryFleet fleet(*region);
    // The reading is sound: a car the primary placed (its simulator locates) reads as its snap.
    const std::optional<CarSnapshot> placed = fleet.car(1);
    QVERIFY(placed && placed->road.located);
    const city::RoadPoint placedSnap = city.snap({placed->position.lat, placed->position.lng});
    QVERIFY(placedSnap.valid && placedSnap.segment == placed->road.segment
            && placedSnap.offsetM == placed->road.offsetM);

    const std::optional<CarSnapshot> car = fleet.car(kCar);
    QVERIFY(car);
    // The report is what the region holds (the simulator did not move the car since).
    QVERIFY2(car->position.lat == reported.lat && car->position.lng == reported.lng,
             qPrintable(QStringLiteral("car %1 stored at %2,%3, reported at %4,%5")
                            .arg(kCar)
                            .arg(car->position.lat, 0, 'g', 17)
                            .arg(car->position.lng, 0, 'g', 17)
                            .arg(reported.lat, 0, 'g', 17)
                            .arg(reported.lng, 0, 'g', 17)));
    QVERIFY2(car->road.located,
             "the position a worker stored has no road place: nearby snaps this car on every request");
    const city::RoadPoint snapped = city.snap({reported.lat, reported.lng});
    QVERIFY(snapped.valid);
    QCOMPARE(car->road.segment, snapped.segment);
    QVERIFY2(car->road.offsetM == snapped.offsetM, qPrintable(QStringLiteral("stored offset %1 m, snap's %2 m")
                                                                  .arg(car->road.offsetM, 0, 'g', 17)
                                                                  .arg(snapped.offsetM, 0, 'g', 17)));
    QVERIFY2(server.isRunning(), "the server died: " + server.stderrText());
}

QTEST_GUILESS_MAIN(WorkerRoadPlaceTest)
#include "runtime_worker_road_place_test.moc"
