// A trip metered across two nodes (issue 17, the hostile review of a 3-node cluster): a 30 s
// trip was billed 17-27 km. Each copy kept its own odometer per car yet took the sender's in every
// position it applied, the pickup stamped the trip's start on the picking node's odometer, and the
// ledger's resync (every 30 s) wrote an on-trip booking back with no start at all: the fare then
// metered the car's whole odometer, whatever node read it.
//
// Two real nodes on one PostgreSQL and one Redis: book and pick up on node two (which does not
// lead), drive the car by device reports through both nodes for longer than a resync period,
// complete on node one. Before the pickup the car is driven 3 km out and back, so an odometer
// mixed into the trip shows as kilometres. The trip must be billed the metres driven on board.
//
// And across a Redis outage (the review of the metres-on-board design): Redis frozen while a trip
// is picked up and driven through node one, then thawed, driven on and completed on node two. Node
// two heard the trip's metres so far (the announce, the resync's checkpoint) while its copy still
// held the car where it was before the outage, and counted the catch-up move to the car's new
// position again: 10 km billed for 5 km driven.
//
// And a completion the other node missed (Redis frozen while the trip ended): its resync took the
// ended booking from the ledger without the trip's metres and seconds, so a rider whose GET went
// to that node saw 0 m and the minimum fare.

#include "HttpClient.h"
#include "NodeListKit.h"
#include "PostgresKit.h"
#include "RedisKit.h"
#include "RequireTool.h"
#include "RiderToken.h"
#include "ServerProcess.h"
#include "Wait.h"

#include <QElapsedTimer>
#include <QJsonArray>
#include <QTest>
#include <QThread>
#include <cmath>
#include <memory>

using namespace taxicore::test;

namespace {

constexpr int kCars = 8;
constexpr int kLeadsWithinMs = 15'000;
constexpr int kSeenWithinMs = 10'000;
const QByteArray kAdminToken = QByteArrayLiteral("cluster-trip-distance-admin-token-0123");
constexpr double kPickupLat = 57.7000;
constexpr double kPickupLng = 11.9700;
// Out and back before the pickup: 0.03° of latitude is about 3.3 km each way.
constexpr double kDetourDeg = 0.03;
// On board: four legs north of 0.0025° (about 278 m each), reported through either node in turn,
// kLegGapMs apart so the trip outlasts the copies' ledger resync (ClusterFleet::kResyncMs, 30 s).
constexpr int kLegs = 4;
constexpr double kLegDeg = 0.0025;
constexpr int kLegGapMs = 8'500;
constexpr double kMetresPerDegreeLat = 6'371'008.8 * M_PI / 180.0; // haversine's, along a meridian
constexpr double kToleranceM = 25;

QByteArray positionBody(double lat, double lng)
{
    return "{\"lat\":" + QByteArray::number(lat, 'f', 7) + ",\"lng\":" + QByteArray::number(lng, 'f', 7) + '}';
}

// The car's latitude in `node`'s copy (a nearby search around the pickup), NaN when not listed.
double carLatOn(const ServerProcess &node, int carId)
{
    HttpClient client(node.host(), node.port());
    const HttpResponse answer =
        client.request("GET", "/api/v1/cars/nearby?lat=57.7000&lng=11.9700&radius_m=20000&limit=100");
    for (const QJsonValue car : answer.json().value(QStringLiteral("cars")).toArray())
        if (car.toObject().value(QStringLiteral("id")).toInt() == carId)
            return car.toObject().value(QStringLiteral("lat")).toDouble();
    return std::nan("");
}

// A booking made through `node`, its pickup at (lat, lng): id, car and rider token; id 0 when refused.
struct Booked {
    qint64 id = 0;
    int carId = 0;
    QByteArray token;
    QByteArray refusal;
};

Booked bookThrough(HttpClient &node, const char *rider, double lat, double lng)
{
    const HttpResponse booked =
        node.request("POST", "/api/v1/bookings",
                     QByteArray("{\"rider_id\":\"") + rider + "\",\"pickup\":" + positionBody(lat, lng) + '}',
                     {{"Content-Type", "application/json"}});
    if (booked.status != 201)
        return {0, 0, {}, booked.body};
    return {qint64(booked.json().value(QStringLiteral("booking_id")).toDouble()),
            booked.json().value(QStringLiteral("car_id")).toInt(),
            riderToken(booked.json()),
            {}};
}

} // namespace

class ClusterTripDistanceTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void aTripDrivenThroughBothNodesIsBilledItsOwnMetres();
    void aTripDrivenWhileRedisWasFrozenIsBilledItsOwnMetres();
    void aTripCompletedWhileRedisWasFrozenShowsItsBillOnTheOtherNode();
    void cleanupTestCase();

private:
    std::unique_ptr<ServerProcess> startNode(const QString &name);
    // PUT the car's position through `node` as its device, and wait until `other` shows it.
    void report(const ServerProcess &node, const ServerProcess &other, int carId, double lat, double lng);

    PostgresKit m_postgres;
    RedisKit m_redis;
    std::unique_ptr<ServerProcess> m_one;
    std::unique_ptr<ServerProcess> m_two;
};

std::unique_ptr<ServerProcess> ClusterTripDistanceTest::startNode(const QString &name)
{
    auto node = std::make_unique<ServerProcess>(
        QStringList{QStringLiteral("--node-name"), name, QStringLiteral("--cars"), QString::number(kCars),
                    QStringLiteral("--ledger"), m_postgres.url(), QStringLiteral("--fleet"), m_redis.url(),
                    QStringLiteral("--demand-rate"), QStringLiteral("0"), QStringLiteral("--admin-token"),
                    QString::fromLatin1(kAdminToken), QStringLiteral("--mode"), QStringLiteral("single")});
    if (!node->start(30'000))
        qWarning().noquote() << "node did not start:" << node->error() << node->stderrText();
    return node;
}

void ClusterTripDistanceTest::report(const ServerProcess &node, const ServerProcess &other, int carId, double lat,
                                     double lng)
{
    HttpClient client(node.host(), node.port());
    const HttpResponse answer =
        client.request("PUT", "/api/v1/cars/" + QByteArray::number(carId) + "/position", positionBody(lat, lng),
                       {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + kAdminToken}});
    QVERIFY2(answer.status == 200, answer.body.constData());
    // The next report goes through the other node: it must have this one first.
    QVERIFY2(waitUntil([&] { return std::abs(carLatOn(other, carId) - lat) < 1e-6; }, kSeenWithinMs),
             qPrintable(QStringLiteral("the other node never showed the car at %1").arg(lat, 0, 'f', 6)));
}

void ClusterTripDistanceTest::initTestCase()
{
    TC_REQUIRE_TOOL(!PostgresKit::binDir().isEmpty(), "PostgreSQL is not installed (package postgresql)");
    TC_REQUIRE_TOOL(!RedisKit::program().isEmpty(), "redis-server is not installed (package redis-server)");
    QVERIFY2(m_postgres.start(), qPrintable(m_postgres.error()));
    QString error;
    QVERIFY2(m_redis.start({}, &error), qPrintable(error));
    m_one = startNode(QStringLiteral("node-one"));
    QVERIFY2(m_one->isRunning(), qPrintable(m_one->stderrText()));
    QVERIFY2(waitUntil([&] { return leaderOf(clusterOf(*m_one)) == QStringLiteral("node-one"); }, kLeadsWithinMs),
             "node one never led");
    m_two = startNode(QStringLiteral("node-two"));
    QVERIFY2(m_two->isRunning(), qPrintable(m_two->stderrText()));
}

void ClusterTripDistanceTest::aTripDrivenThroughBothNodesIsBilledItsOwnMetres()
{
    HttpClient one(m_one->host(), m_one->port());
    HttpClient two(m_two->host(), m_two->port());
    const Booked booked = bookThrough(two, "trip-distance", kPickupLat, kPickupLng);
    QVERIFY2(booked.id != 0, booked.refusal.constData());
    const qint64 id = booked.id;
    const int carId = booked.carId;
    const QByteArray token = booked.token;

    // Kilometres on the odometers before the trip, through both nodes, then at the pickup.
    report(*m_one, *m_two, carId, kPickupLat + kDetourDeg, kPickupLng);
    report(*m_two, *m_one, carId, kPickupLat, kPickupLng);
    QVERIFY2(waitUntil(
                 [&] {
                     return readBooking(two, id, token).json().value(QStringLiteral("state")).toString()
                            == QStringLiteral("arriving");
                 },
                 kSeenWithinMs),
             "node two never showed the car arrived");
    const HttpResponse pickedUp = moveBooking(two, id, "pickup", token);
    QVERIFY2(pickedUp.status == 200, pickedUp.body.constData());
    QVERIFY2(waitUntil(
                 [&] {
                     return readBooking(one, id, token).json().value(QStringLiteral("state")).toString()
                            == QStringLiteral("on_trip");
                 },
                 kSeenWithinMs),
             "node one never showed the pickup");

    double lat = kPickupLat;
    for (int leg = 0; leg < kLegs; ++leg) {
        QThread::msleep(kLegGapMs);
        lat += kLegDeg;
        const bool throughOne = leg % 2 == 0;
        report(throughOne ? *m_one : *m_two, throughOne ? *m_two : *m_one, carId, lat, kPickupLng);
    }
    const double drivenM = kLegs * kLegDeg * kMetresPerDegreeLat;

    // Under way, both nodes show the metres on board (both have resynced from the ledger by now).
    for (HttpClient *node : {&one, &two}) {
        const double shown = readBooking(*node, id, token).json().value(QStringLiteral("distance_m")).toDouble();
        QVERIFY2(std::abs(shown - drivenM) < kToleranceM,
                 qPrintable(QStringLiteral("node %1 shows %2 m on board of %3 m driven")
                                .arg(node == &one ? 1 : 2)
                                .arg(shown)
                                .arg(drivenM)));
    }
    const HttpResponse completed = moveBooking(one, id, "complete", token);
    QVERIFY2(completed.status == 200, completed.body.constData());
    const double billedM = completed.json().value(QStringLiteral("distance_m")).toDouble();
    QVERIFY2(std::abs(billedM - drivenM) < kToleranceM,
             qPrintable(QStringLiteral("billed %1 m for %2 m driven on board").arg(billedM).arg(drivenM)));
    // The other node shows the trip as billed.
    QVERIFY2(waitUntil(
                 [&] {
                     const QJsonObject seen = readBooking(two, id, token).json();
                     return seen.value(QStringLiteral("state")).toString() == QStringLiteral("completed")
                            && seen.value(QStringLiteral("distance_m")).toDouble() == billedM;
                 },
                 kSeenWithinMs),
             "node two never showed the trip completed as billed");
}

void ClusterTripDistanceTest::aTripDrivenWhileRedisWasFrozenIsBilledItsOwnMetres()
{
    // Steps of 0.0045° (about 500 m) north, kFrozenSteps while Redis is frozen, as many after.
    constexpr int kFrozenSteps = 10;
    constexpr double kStepDeg = 0.0045;
    // Long enough for the nodes to give up on Redis and subscribe again (the reviewer's 12 s).
    constexpr int kFrozenMs = 12'000;
    constexpr int kStepGapMs = 400;
    constexpr double kLng = kPickupLng - 0.01; // away from the first case's car
    HttpClient one(m_one->host(), m_one->port());
    HttpClient two(m_two->host(), m_two->port());
    const Booked booked = bookThrough(one, "trip-outage", kPickupLat, kLng);
    QVERIFY2(booked.id != 0, booked.refusal.constData());
    const qint64 id = booked.id;
    const int carId = booked.carId;
    const QByteArray token = booked.token;
    report(*m_one, *m_two, carId, kPickupLat, kLng);
    QVERIFY2(waitUntil(
                 [&] {
                     return readBooking(two, id, token).json().value(QStringLiteral("state")).toString()
                            == QStringLiteral("arriving");
                 },
                 kSeenWithinMs),
             "node two never showed the car arrived");

    QVERIFY(m_redis.pause());
    QElapsedTimer frozen;
    frozen.start();
    const HttpResponse pickedUp = moveBooking(one, id, "pickup", token);
    const bool pickedUpOk = pickedUp.status == 200;
    double lat = kPickupLat;
    for (int step = 0; pickedUpOk && step < kFrozenSteps; ++step) {
        lat += kStepDeg;
        HttpClient device(m_one->host(), m_one->port());
        const HttpResponse answer =
            device.request("PUT", "/api/v1/cars/" + QByteArray::number(carId) + "/position", positionBody(lat, kLng),
                           {{"Content-Type", "application/json"}, {"Authorization", "Bearer " + kAdminToken}});
        if (answer.status != 200)
            qWarning() << "a report during the freeze answered" << answer.status;
        QThread::msleep(kStepGapMs);
    }
    QThread::msleep(std::max<qint64>(0, kFrozenMs - frozen.elapsed()));
    QVERIFY(m_redis.resume());
    QVERIFY2(pickedUpOk, pickedUp.body.constData());

    for (int step = 0; step < kFrozenSteps; ++step) {
        lat += kStepDeg;
        report(*m_one, *m_two, carId, lat, kLng);
    }
    const double drivenM = 2 * kFrozenSteps * kStepDeg * kMetresPerDegreeLat;
    const HttpResponse completed = moveBooking(two, id, "complete", token);
    QVERIFY2(completed.status == 200, completed.body.constData());
    const double billedM = completed.json().value(QStringLiteral("distance_m")).toDouble();
    QVERIFY2(std::abs(billedM - drivenM) < kToleranceM,
             qPrintable(QStringLiteral("billed %1 m for %2 m driven on board").arg(billedM).arg(drivenM)));
}

void ClusterTripDistanceTest::aTripCompletedWhileRedisWasFrozenShowsItsBillOnTheOtherNode()
{
    constexpr int kSteps = 4;
    constexpr double kStepDeg = 0.0045;        // about 500 m north each
    constexpr int kFrozenMs = 12'000;          // the nodes give up on Redis and subscribe again (a resync)
    constexpr double kLng = kPickupLng + 0.01; // away from the other cases' cars
    HttpClient one(m_one->host(), m_one->port());
    HttpClient two(m_two->host(), m_two->port());
    const Booked booked = bookThrough(one, "trip-missed", kPickupLat, kLng);
    QVERIFY2(booked.id != 0, booked.refusal.constData());
    const qint64 id = booked.id;
    report(*m_one, *m_two, booked.carId, kPickupLat, kLng);
    QVERIFY2(waitUntil(
                 [&] {
                     return readBooking(one, id, booked.token).json().value(QStringLiteral("state")).toString()
                            == QStringLiteral("arriving");
                 },
                 kSeenWithinMs),
             "node one never showed the car arrived");
    const HttpResponse pickedUp = moveBooking(one, id, "pickup", booked.token);
    QVERIFY2(pickedUp.status == 200, pickedUp.body.constData());
    double lat = kPickupLat;
    for (int step = 0; step < kSteps; ++step) {
        lat += kStepDeg;
        report(*m_one, *m_two, booked.carId, lat, kLng);
    }
    QVERIFY2(waitUntil(
                 [&] {
                     return readBooking(two, id, booked.token).json().value(QStringLiteral("state")).toString()
                            == QStringLiteral("on_trip");
                 },
                 kSeenWithinMs),
             "node two never showed the pickup");

    QVERIFY(m_redis.pause());
    QElapsedTimer frozen;
    frozen.start();
    const HttpResponse completed = moveBooking(one, id, "complete", booked.token);
    QThread::msleep(std::max<qint64>(0, kFrozenMs - frozen.elapsed()));
    QVERIFY(m_redis.resume());
    QVERIFY2(completed.status == 200, completed.body.constData());
    const QJsonObject billed = completed.json();
    const double billedM = billed.value(QStringLiteral("distance_m")).toDouble();
    const double billedTotal =
        billed.value(QStringLiteral("fare")).toObject().value(QStringLiteral("total")).toDouble();
    QVERIFY2(billedM > 1'000, qPrintable(QStringLiteral("billed %1 m").arg(billedM)));

    // Node two never heard the completion: its resync (on subscribing again) takes it from the ledger.
    QJsonObject seen;
    const bool completedThere = waitUntil(
        [&] {
            seen = readBooking(two, id, booked.token).json();
            return seen.value(QStringLiteral("state")).toString() == QStringLiteral("completed");
        },
        kLeadsWithinMs);
    QVERIFY2(completedThere, "node two never showed the trip completed");
    QCOMPARE(seen.value(QStringLiteral("distance_m")).toDouble(), billedM);
    QCOMPARE(seen.value(QStringLiteral("duration_s")).toDouble(),
             billed.value(QStringLiteral("duration_s")).toDouble());
    QCOMPARE(seen.value(QStringLiteral("fare")).toObject().value(QStringLiteral("total")).toDouble(), billedTotal);
}

void ClusterTripDistanceTest::cleanupTestCase()
{
    if (m_two)
        m_two->stop();
    if (m_one)
        m_one->stop();
    m_redis.stop();
    m_postgres.stop();
}

QTEST_GUILESS_MAIN(ClusterTripDistanceTest)
#include "cluster_trip_distance_test.moc"
