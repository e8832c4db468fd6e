// GET /api/v1/cars/nearby's body written straight into bytes (http/JsonViews nearbyJson) is byte
// for byte what the QJsonObject construction it replaced gives through QJsonDocument: the same
// keys in the same order, every number written as Qt writes it (integral doubles as integers,
// the shortest form that reads back exactly, 1e-05 and 1.7e+12 style exponents, null for
// non-finite ETAs), for random cars and for the awkward values. The live feed's cars array
// (nearbyCarsJson, the same writer) is what the feed's own QJsonArray construction gave.

#include "http/JsonViews.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace taxicore;

namespace {

constexpr int kRandomAnswers = 2000;
constexpr int kMaxCarsPerAnswer = 25;

// The construction TaxiApi::nearby used before nearbyJson: the reference.
QByteArray viaQJsonDocument(const std::vector<NearbyCar> &found, const std::vector<double> &etas)
{
    QJsonArray cars;
    for (std::size_t i = 0; i < found.size(); ++i) {
        QJsonObject car = carJson(found[i].car);
        car.insert(QStringLiteral("distance_m"), std::round(found[i].distanceM * 10) / 10);
        car.insert(QStringLiteral("eta_s"), std::isfinite(etas[i]) ? QJsonValue(std::round(etas[i])) : QJsonValue());
        cars.append(car);
    }
    return QJsonDocument(QJsonObject{{QStringLiteral("cars"), cars}}).toJson(QJsonDocument::Compact);
}

// The construction LiveFeed's updates used before nearbyCarsJson: the reference for the array.
QByteArray arrayViaQJsonDocument(const std::vector<NearbyCar> &found, const std::vector<double> &etas)
{
    QJsonArray cars;
    for (std::size_t i = 0; i < found.size(); ++i) {
        QJsonObject car = carJson(found[i].car);
        car.insert(QStringLiteral("distance_m"), std::round(found[i].distanceM * 10) / 10);
        const bool known = i < etas.size() && std::isfinite(etas[i]);
        car.insert(QStringLiteral("eta_s"), known ? QJsonValue(std::round(etas[i])) : QJsonValue());
        cars.append(car);
    }
    return QJsonDocument(cars).toJson(QJsonDocument::Compact);
}

} // namespace

class NearbyJsonTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void randomAnswersMatchQJsonDocument();
    void awkwardNumbersMatchQJsonDocument();
    void numbersOfEveryMagnitudeMatchQJsonDocument();
    void emptyAnswer();
    void feedCarsArrayMatchesQJsonDocument();
};

void NearbyJsonTest::randomAnswersMatchQJsonDocument()
{
    std::mt19937_64 random(18);
    std::uniform_real_distribution<double> lat(57.6, 57.8), lng(11.8, 12.1), heading(0, 360), speed(0, 90);
    std::uniform_real_distribution<double> distance(0, 50'000), eta(0, 4000), unit(0, 1);
    std::uniform_int_distribution<int> count(0, kMaxCarsPerAnswer), state(0, 4), id(1, 100'000);
    for (int answer = 0; answer < kRandomAnswers; ++answer) {
        std::vector<NearbyCar> found(std::size_t(count(random)));
        std::vector<double> etas;
        for (NearbyCar &n : found) {
            n.car.id = id(random);
            n.car.position = {lat(random), lng(random)};
            n.car.heading = float(heading(random));
            n.car.speedKmh = unit(random) < 0.3 ? 0.0f : float(speed(random));
            n.car.state = static_cast<CarState>(state(random));
            n.car.bookingId = unit(random) < 0.5 ? 0 : uint64_t(id(random));
            n.car.updatedMs = 1'764'000'000'000 + int64_t(id(random));
            n.distanceM = distance(random);
            etas.push_back(unit(random) < 0.1 ? std::numeric_limits<double>::infinity() : eta(random));
        }
        const QByteArray expected = viaQJsonDocument(found, etas);
        const QByteArray written = nearbyJson(found, etas);
        if (written != expected)
            QFAIL(qPrintable(QStringLiteral("answer %1 differs:\nexpected %2\nwritten  %3")
                                 .arg(answer)
                                 .arg(QString::fromUtf8(expected), QString::fromUtf8(written))));
    }
}

void NearbyJsonTest::awkwardNumbersMatchQJsonDocument()
{
    // Positions anywhere a device may report, tiny and huge headings/speeds/distances, integral
    // values either side of 2^53, negative zero, ETAs that round to integers or are not finite.
    const double values[] = {0.0,  -0.0, 1e-7,   -1e-6,   1e-5,   0.0001,   0.00012, 3e-4,      0.1,
                             0.05, 0.95, 1,      57.7,    -33.9,  11.97,    -151.2,  89.999999, 180,
                             -180, 100,  1e5,    1e6,     1.25e6, 123456.7, 1e8,     1.7e12,    9007199254740992.0,
                             1e16, 1e21, 3599.5, 3600.49, 1e300,  -1e300};
    const double specials[] = {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(),
                               std::numeric_limits<double>::quiet_NaN()};
    std::vector<NearbyCar> found;
    std::vector<double> etas;
    int id = 1;
    for (const double v : values) {
        NearbyCar n;
        n.car.id = id++;
        n.car.position = {v, -v};
        n.car.heading = float(v);
        n.car.speedKmh = float(v / 3);
        n.car.bookingId = uint64_t(id) * 1'000'000'007ull;
        n.car.updatedMs = int64_t(v > 0 && v < 1e15 ? v : 0);
        n.distanceM = std::abs(v);
        found.push_back(n);
        etas.push_back(v);
    }
    for (const double v : specials) {
        NearbyCar n;
        n.car.id = id++;
        found.push_back(n);
        etas.push_back(v);
    }
    const QByteArray expected = viaQJsonDocument(found, etas);
    const QByteArray written = nearbyJson(found, etas);
    // Car by car, so a failure names the value.
    const QList<QByteArray> expectedCars = expected.split('{'), writtenCars = written.split('{');
    QCOMPARE(writtenCars.size(), expectedCars.size());
    for (qsizetype i = 0; i < expectedCars.size(); ++i)
        QCOMPARE(writtenCars[i], expectedCars[i]);
    QCOMPARE(written, expected);
}

void NearbyJsonTest::numbersOfEveryMagnitudeMatchQJsonDocument()
{
    // Log-uniform magnitudes from 10^-9 to 10^17 of either sign, in every numeric field: the
    // writer's shortcuts for rounded values must switch to Qt's form exactly where Qt does.
    std::mt19937_64 random(2026);
    std::uniform_real_distribution<double> exponent(-9, 17), unit(0, 1);
    const auto any = [&] { return (unit(random) < 0.5 ? -1 : 1) * std::pow(10.0, exponent(random)); };
    for (int answer = 0; answer < kRandomAnswers; ++answer) {
        std::vector<NearbyCar> found(kMaxCarsPerAnswer);
        std::vector<double> etas;
        for (NearbyCar &n : found) {
            n.car.position = {any(), any()};
            n.car.heading = float(any());
            n.car.speedKmh = float(any());
            n.distanceM = std::abs(any());
            etas.push_back(std::abs(any()));
        }
        const QByteArray expected = viaQJsonDocument(found, etas);
        const QByteArray written = nearbyJson(found, etas);
        if (written != expected)
            QFAIL(qPrintable(QStringLiteral("answer %1 differs:\nexpected %2\nwritten  %3")
                                 .arg(answer)
                                 .arg(QString::fromUtf8(expected), QString::fromUtf8(written))));
    }
}

void NearbyJsonTest::emptyAnswer()
{
    QCOMPARE(nearbyJson({}, {}), QByteArray("{\"cars\":[]}"));
    QCOMPARE(nearbyJson({}, {}), viaQJsonDocument({}, {}));
}

void NearbyJsonTest::feedCarsArrayMatchesQJsonDocument()
{
    std::mt19937_64 random(2);
    std::uniform_real_distribution<double> lat(57.6, 57.8), lng(11.8, 12.1), speed(0, 90), eta(0, 4000), unit(0, 1);
    std::uniform_int_distribution<int> count(0, kMaxCarsPerAnswer), state(0, 4), id(1, 100'000);
    for (int answer = 0; answer < kRandomAnswers; ++answer) {
        std::vector<NearbyCar> found(std::size_t(count(random)));
        std::vector<double> etas;
        for (NearbyCar &n : found) {
            n.car.id = id(random);
            n.car.position = {lat(random), lng(random)};
            n.car.heading = float(unit(random) * 360);
            n.car.speedKmh = float(speed(random));
            n.car.state = static_cast<CarState>(state(random));
            n.car.bookingId = unit(random) < 0.5 ? 0 : uint64_t(id(random));
            n.car.updatedMs = 1'764'000'000'000 + int64_t(id(random));
            n.distanceM = unit(random) * 5000;
            etas.push_back(unit(random) < 0.1 ? std::numeric_limits<double>::infinity() : eta(random));
        }
        // The feed without road ETAs for a tick still answers every car (fewer ETAs than cars: null).
        if (answer % 7 == 0 && !etas.empty())
            etas.pop_back();
        const QByteArray written = nearbyCarsJson(found, etas);
        QCOMPARE(written, arrayViaQJsonDocument(found, etas));
        QCOMPARE(nearbyJson(found, etas), "{\"cars\":" + written + "}");
    }
    QCOMPARE(nearbyCarsJson({}, {}), QByteArray("[]"));
}

QTEST_GUILESS_MAIN(NearbyJsonTest)
#include "server_nearby_json_test.moc"
