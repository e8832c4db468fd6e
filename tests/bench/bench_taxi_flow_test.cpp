#include "EngineTestSupport.h"
#include "ServerProcess.h"
#include "TestHttpServer.h"
#include "scenarios/JsonPeek.h"
#include "scenarios/SiegeTaxiSource.h"
#include "scenarios/TaxiMixSource.h"
#include "scenarios/TaxiPlan.h"

#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>

using namespace benchtest;

namespace {

const RequestRenderer kRenderer("127.0.0.1:8080", HttpMode::KeepAlive);
const TaxiRequests kRequests(kRenderer);

bool carriesBearer(std::string_view request, std::string_view token)
{
    return request.find("\r\nAuthorization: Bearer " + std::string(token) + "\r\n") != std::string_view::npos;
}

std::string requestLine(std::string_view request)
{
    return std::string(request.substr(0, request.find(" HTTP/1.1")));
}

QJsonObject body(std::string_view request)
{
    const auto start = request.find("\r\n\r\n");
    return QJsonDocument::fromJson(QByteArray::fromStdString(std::string(request.substr(start + 4)))).object();
}

bool inInnerCity(double lat, double lng)
{
    return lat >= TaxiRequests::kMinLat && lat <= TaxiRequests::kMaxLat && lng >= TaxiRequests::kMinLng
           && lng <= TaxiRequests::kMaxLng;
}

TaxiMixWeights onlyBooking()
{
    return {0, 0, 0, 1};
}

} // namespace

class TaxiFlowTest : public QObject {
    Q_OBJECT

private slots:
    void bookingFlowPicksUpWhenTheCarIsArriving()
    {
        FastRandom random(1);
        TaxiMixSource source(kRequests, "r7", onlyBooking());
        const std::string_view book = source.nextRequest(random);
        QCOMPARE(requestLine(book), std::string("POST /api/v1/bookings"));
        const QJsonObject booking = body(book);
        QCOMPARE(booking["rider_id"].toString(), QString("r7"));
        QVERIFY(inInnerCity(booking["pickup"][QLatin1String("lat")].toDouble(),
                            booking["pickup"][QLatin1String("lng")].toDouble()));
        QVERIFY(inInnerCity(booking["dropoff"][QLatin1String("lat")].toDouble(),
                            booking["dropoff"][QLatin1String("lng")].toDouble()));

        QCOMPARE(source.onResponse(201, R"({"booking_id":42,"car_id":3,"rider_token":"tok42","state":"assigned"})"),
                 ResponseClass::Success);
        // Only the booking's owner may read or move it: each call carries the rider token.
        const std::string read(source.nextRequest(random));
        QCOMPARE(requestLine(read), std::string("GET /api/v1/bookings/42"));
        QVERIFY2(carriesBearer(read, "tok42"), read.c_str());
        QCOMPARE(source.onResponse(200, R"({"booking_id":42,"state":"arriving"})"), ResponseClass::Success);
        const std::string pickup(source.nextRequest(random));
        QCOMPARE(requestLine(pickup), std::string("POST /api/v1/bookings/42/pickup"));
        QVERIFY2(carriesBearer(pickup, "tok42"), pickup.c_str());
        QCOMPARE(source.onResponse(200, "{}"), ResponseClass::Success);
        const std::string complete(source.nextRequest(random));
        QCOMPARE(requestLine(complete), std::string("POST /api/v1/bookings/42/complete"));
        QVERIFY2(carriesBearer(complete, "tok42"), complete.c_str());
        QCOMPARE(source.onResponse(200, "{}"), ResponseClass::Success);
        QCOMPARE(requestLine(source.nextRequest(random)), std::string("POST /api/v1/bookings"));
    }

    void bookingFlowCancelsWhenTheCarIsNotArriving()
    {
        FastRandom random(2);
        TaxiMixSource source(kRequests, "r1", onlyBooking());
        source.nextRequest(random);
        source.onResponse(201, R"({"booking_id": 9, "rider_token": "nine", "state":"assigned"})");
        source.nextRequest(random);
        source.onResponse(200, R"({"state":"assigned","booking_id":9})");
        const std::string cancel(source.nextRequest(random));
        QCOMPARE(requestLine(cancel), std::string("POST /api/v1/bookings/9/cancel"));
        QVERIFY2(carriesBearer(cancel, "nine"), cancel.c_str());
    }

    void refusedBookingIsNoCarNotAnError()
    {
        FastRandom random(3);
        TaxiMixSource source(kRequests, "r1", onlyBooking());
        source.nextRequest(random);
        QCOMPARE(source.onResponse(409, R"({"error":"no_car_available"})"), ResponseClass::NoCarAvailable);
        QCOMPARE(requestLine(source.nextRequest(random)), std::string("POST /api/v1/bookings"));
    }

    void illegalPickupIsAConflictFollowedByCancel()
    {
        FastRandom random(4);
        TaxiMixSource source(kRequests, "r1", onlyBooking());
        source.nextRequest(random);
        source.onResponse(201, R"({"booking_id":5})");
        source.nextRequest(random);
        source.onResponse(200, R"({"state":"arriving"})");
        source.nextRequest(random);
        QCOMPARE(source.onResponse(409, R"({"error":"illegal_transition"})"), ResponseClass::Conflict);
        QCOMPARE(requestLine(source.nextRequest(random)), std::string("POST /api/v1/bookings/5/cancel"));
        QCOMPARE(source.onResponse(500, "{}"), ResponseClass::HttpError);
    }

    void independentCallsHaveValidInputs()
    {
        FastRandom random(5);
        TaxiMixSource source(kRequests, "r1", {1, 1, 1, 0});
        int positions = 0;
        for (int i = 0; i < 300; ++i) {
            const std::string_view request = source.nextRequest(random);
            const std::string line = requestLine(request);
            if (line.rfind("PUT /api/v1/cars/", 0) == 0) {
                ++positions;
                const int carId = std::stoi(line.substr(17));
                QVERIFY(carId >= 1 && carId <= TaxiRequests::kFleetSize);
                const QJsonObject position = body(request);
                QVERIFY(inInnerCity(position["lat"].toDouble(), position["lng"].toDouble()));
            } else {
                QVERIFY2(line.rfind("GET /api/v1/cars/nearby?lat=57.", 0) == 0
                             || line.rfind("GET /api/v1/quote?from_lat=57.", 0) == 0,
                         line.c_str());
            }
            QCOMPARE(source.onResponse(200, "{}"), ResponseClass::Success);
        }
        QVERIFY(positions > 50 && positions < 150); // about a third
    }

    void siegeCycleUsesTheBookingJustMade()
    {
        FastRandom random(6);
        SiegeTaxiSource source(kRequests, "r1");
        QVERIFY(requestLine(source.nextRequest(random)).starts_with("PUT /api/v1/cars/"));
        source.onResponse(200, "{}");
        QVERIFY(requestLine(source.nextRequest(random)).starts_with("GET /api/v1/cars/nearby"));
        source.onResponse(200, "{}");
        QCOMPARE(requestLine(source.nextRequest(random)), std::string("POST /api/v1/bookings"));
        source.onResponse(201, R"({"booking_id":77,"rider_token":"tok77"})");
        const std::string read(source.nextRequest(random));
        QCOMPARE(requestLine(read), std::string("GET /api/v1/bookings/77"));
        QVERIFY2(carriesBearer(read, "tok77"), read.c_str());
    }

    void jsonPeekReadsFlatFields()
    {
        const std::string_view json = R"({"xbooking_id":1, "booking_id" : 123,"state":"on_trip"})";
        QCOMPARE(peekJsonInteger(json, "booking_id").value_or(-1), int64_t{123});
        QCOMPARE(std::string(peekJsonString(json, "state").value_or("")), std::string("on_trip"));
        QVERIFY(!peekJsonInteger(json, "car_id"));
        // TaxiCore nests the car, with its own state, before the booking's state.
        const std::string_view nested =
            "{\"booking_id\":1,\"car\":{\"booking_id\":1,\"state\":\"to_pickup\",\"tags\":[\"a,"
            "\\\"state\\\":\"]},\"state\":\"arriving\"}";
        QCOMPARE(std::string(peekJsonString(nested, "state").value_or("")), std::string("arriving"));
        QCOMPARE(peekJsonInteger(nested, "booking_id").value_or(-1), int64_t{1});
    }

    void taxiMixAgainstAFakeServerCarriesBookingIds()
    {
        TestHttpServer server(TestHttpServer::Behaviour::FakeTaxi);
        const Target target = targetFor(server.url("/"));
        auto plan = std::make_shared<TaxiPlan>(
            TaxiPlan::Style::Mix, RequestRenderer(target.hostHeader, HttpMode::KeepAlive), TaxiMixWeights{1, 1, 1, 3});
        LoadEngine engine(target, countSettings(4, 300), plan);
        const StageResult result = engine.run();
        QCOMPARE(result.responses(), uint64_t{300});
        QCOMPARE(result.errors(), uint64_t{0});
        QVERIFY(result.totals.value(WorkerStats::NoCarAvailable) > 0);
        int pickups = 0;
        for (const std::string &line : server.requestLines()) {
            if (line.find("/pickup ") != std::string::npos) {
                ++pickups;
                QVERIFY2(line.rfind("POST /api/v1/bookings/", 0) == 0, line.c_str());
            }
        }
        QVERIFY(pickups > 0);
        // The breakdown names every call of the flow that was made, and adds up.
        QCOMPARE(result.kindNames.size(), result.totals.kinds().size());
        uint64_t byKind = 0;
        for (const auto &kind : result.totals.kinds())
            byKind += kind.responses;
        QCOMPARE(byKind, result.responses());
        const auto at = [&](const char *name) {
            const auto it = std::find(result.kindNames.begin(), result.kindNames.end(), name);
            return result.totals.kinds()[static_cast<std::size_t>(it - result.kindNames.begin())];
        };
        QCOMPARE(at("POST pickup").responses, static_cast<uint64_t>(pickups));
        QVERIFY(at("GET booking").responses > 0);
    }

    // The booking flow against a real taxicore-server, which answers a move without the
    // booking's rider token with 401/403: every move of every connection must succeed or be a
    // legal 409, never an HTTP error.
    void bookingFlowOwnsItsBookingsOnTheRealServer()
    {
        taxicore::test::ServerProcess server(
            {QStringLiteral("--cars"), QStringLiteral("200"), QStringLiteral("--sim-speed"), QStringLiteral("50")});
        QVERIFY2(server.start(), qPrintable(server.error()));
        const Target target =
            targetFor("http://" + server.host().toStdString() + ":" + std::to_string(server.port()) + "/");
        auto plan = std::make_shared<TaxiPlan>(TaxiPlan::Style::Mix,
                                               RequestRenderer(target.hostHeader, HttpMode::KeepAlive), onlyBooking());
        LoadEngine engine(target, countSettings(4, 200), plan);
        const StageResult result = engine.run();
        QCOMPARE(result.responses(), uint64_t{200});
        QCOMPARE(result.errors(), uint64_t{0});
        const auto moves = [&](const char *name) {
            const auto it = std::find(result.kindNames.begin(), result.kindNames.end(), name);
            return result.totals.kinds()[static_cast<std::size_t>(it - result.kindNames.begin())].responses;
        };
        QVERIFY(moves("POST cancel") + moves("POST pickup") > 0);
        QCOMPARE(server.stop(), 0);
    }
};

QTEST_GUILESS_MAIN(TaxiFlowTest)
#include "bench_taxi_flow_test.moc"
