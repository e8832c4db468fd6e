// A cluster node's copy of the fleet (cluster/ClusterFleet) without the network: the feed's
// message format, and how SharedMemoryFleet applies what other nodes announce — two regions in one
// process stand for two nodes.

#include "FleetLine.h"

#include "cluster/FleetDelta.h"
#include "fleet/SharedMemoryFleet.h"
#include "region/SharedRegion.h"

#include <QTest>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>

using namespace taxicore;
using namespace taxicore::test;

namespace {

struct Node {
    std::unique_ptr<SharedRegion> region;
    std::unique_ptr<SharedMemoryFleet> fleet;
};

Node makeNode(int cars)
{
    Node node;
    QString error;
    node.region = SharedRegion::create(error);
    if (!node.region)
        qFatal("cannot create a region: %s", qPrintable(error));
    node.fleet = std::make_unique<SharedMemoryFleet>(*node.region);
    node.fleet->initialiseCars(cars, placeNorth);
    return node;
}

CarState carState(const Node &node, int id)
{
    return node.fleet->car(id)->state;
}

} // namespace

class ClusterFleetCopyTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void deltasRoundTrip();
    void theWireBytesAreFeedFormatVersion3s();
    void roadPlacesTravelWithTheirCitysChecksum();
    void unreadableDeltasAreRefused();
    void implausibleValuesAreRefused();
    void aMessageCarriesSeveralDeltasInOrder();
    void unreadableMessagesAreRefused();
    void idsComeFromTheSourceAndZeroRefusesTheBooking();
    void aRemoteBookingTakesItsCarAndStatesOnlyMoveForward();
    void aRemoteReassignmentMovesTheCar();
    void aReassignSettledAfterTheCopyHeardItKeepsTheNewCar();
    void aHeldCarIsNoCandidateUntilItsBookingArrives();
    void aLocalBookingThatLostItsClaimDoesNotFreeTheWinnersCar();
    void aResyncLeavesACarTakenByABookingInFlight();
    void aRemoteBookingOfTheCarABookingIsTakingSendsItToTheNext();
    void remotePositionsApplyOnlyWhenNewerAndNeverMarkAnArrival();
    void aRemoteTripIsMeteredOnThisCopysOdometer();
    void aMoveThisCopyMissedIsNotCountedTwice();
};

void ClusterFleetCopyTest::deltasRoundTrip()
{
    FleetDelta cars;
    cars.origin = 0xabcdef0123456789ULL;
    CarSnapshot c;
    c.id = 42;
    c.position = {57.71, 11.96};
    c.heading = 90.5f;
    c.speedKmh = 31.25f;
    c.state = CarState::OnTrip;
    c.bookingId = 7;
    c.updatedMs = 1'700'000'000'123;
    c.odometerM = 99'999; // this host's: never sent
    c.tripM = 12'345.5;
    cars.cars = {c, c};
    cars.cars[1].id = 43;
    const auto back = decodeFleetDelta(encodeFleetDelta(cars));
    QVERIFY(back);
    QCOMPARE(back->kind, FleetDelta::Kind::Cars);
    QCOMPARE(back->origin, cars.origin);
    QCOMPARE(int(back->cars.size()), 2);
    QCOMPARE(back->cars[1].id, 43);
    QCOMPARE(back->cars[0].position.lat, c.position.lat);
    QCOMPARE(back->cars[0].heading, c.heading);
    QCOMPARE(back->cars[0].state, CarState::OnTrip);
    QCOMPARE(back->cars[0].bookingId, uint64_t(7));
    QCOMPARE(back->cars[0].updatedMs, c.updatedMs);
    QCOMPARE(back->cars[0].tripM, c.tripM);
    QCOMPARE(back->cars[0].odometerM, 0.0);
    QCOMPARE(decodeCar(encodeCar(c))->tripM, c.tripM);
    QVERIFY(back->deviceCars.empty());
    cars.deviceCars = {43};
    QCOMPARE(decodeFleetDelta(encodeFleetDelta(cars))->deviceCars, std::vector<int>{43});

    FleetDelta booking;
    booking.kind = FleetDelta::Kind::Booking;
    booking.origin = 5;
    BookingSnapshot &b = booking.booking;
    b.id = 1u << 20;
    b.state = BookingState::Arriving;
    b.carId = 3;
    b.riderId = QStringLiteral("rider-åäö");
    b.pickup = {57.7, 11.9};
    b.hasDropoff = true;
    b.dropoff = {57.72, 11.99};
    b.etaS = 12;
    b.createdMs = 1;
    b.arrivedMs = 2;
    b.riderTokenHash = QByteArray(32, 'h');
    b.hasDestination = true;
    b.destination = {57.73, 11.98};
    const auto backBooking = decodeFleetDelta(encodeFleetDelta(booking));
    QVERIFY(backBooking);
    QCOMPARE(backBooking->kind, FleetDelta::Kind::Booking);
    QCOMPARE(backBooking->booking.id, b.id);
    QCOMPARE(backBooking->booking.state, BookingState::Arriving);
    QCOMPARE(backBooking->booking.riderId, b.riderId);
    QCOMPARE(backBooking->booking.dropoff.lng, b.dropoff.lng);
    QCOMPARE(backBooking->booking.riderTokenHash, b.riderTokenHash);
    QCOMPARE(backBooking->booking.destination.lat, b.destination.lat);
    QVERIFY(!backBooking->price);
    booking.price = BookingPrice{1.4, true, 1800, 300, {40, 50, 20, 90, 1.4, 154}};
    const auto priced = decodeFleetDelta(encodeFleetDelta(booking));
    QVERIFY(priced && priced->price);
    QCOMPARE(priced->price->surge, 1.4);
    QCOMPARE(priced->price->quotedDurationS, 300.0);
    QCOMPARE(priced->price->quote.total, 154.0);

    FleetDelta claim;
    claim.kind = FleetDelta::Kind::Claim;
    claim.origin = 9;
    claim.booking.id = 77;
    claim.booking.carId = 12;
    for (const auto kind : {FleetDelta::Kind::Claim, FleetDelta::Kind::Unclaim}) {
        claim.kind = kind;
        const auto backClaim = decodeFleetDelta(encodeFleetDelta(claim));
        QVERIFY(backClaim);
        QCOMPARE(backClaim->kind, kind);
        QCOMPARE(backClaim->origin, quint64(9));
        QCOMPARE(backClaim->booking.id, uint64_t(77));
        QCOMPARE(backClaim->booking.carId, 12);
    }
}

// The bytes every node of one feed version writes and reads: these were written by the QDataStream
// encoder of feed format version 3 (the first release of that version); an encoder or decoder
// rewritten for speed must keep them, or nodes of one cluster stop understanding each other.
void ClusterFleetCopyTest::theWireBytesAreFeedFormatVersion3s()
{
    FleetDelta cars;
    cars.origin = 0x0102030405060708ULL;
    CarSnapshot c;
    c.id = 42;
    c.position = {57.71, 11.96};
    c.heading = 90.5f;
    c.speedKmh = 31.25f;
    c.state = CarState::OnTrip;
    c.bookingId = 7;
    c.updatedMs = 1'700'000'000'123;
    c.tripM = 12'345.5;
    c.road = {true, 1234, 56.78125};
    cars.cars = {c, c};
    cars.cars[1].id = 43;
    cars.cars[1].road = {};
    cars.deviceCars = {43};
    cars.placesKey = 0x0123456789abcdefULL;

    FleetDelta booking;
    booking.kind = FleetDelta::Kind::Booking;
    booking.origin = cars.origin;
    BookingSnapshot &b = booking.booking;
    b.id = 1u << 20;
    b.state = BookingState::OnTrip;
    b.carId = 3;
    b.riderId = QStringLiteral("rider-åäö");
    b.pickup = {57.7, 11.9};
    b.hasDropoff = true;
    b.dropoff = {57.72, 11.99};
    b.etaS = 12;
    b.createdMs = 1;
    b.arrivedMs = 2;
    b.pickupMs = 3;
    b.distanceM = 250.5;
    b.riderTokenHash = QByteArray(4, 'h');
    b.hasDestination = true;
    b.destination = {57.73, 11.98};
    booking.price = BookingPrice{1.4, true, 1800, 300, {40, 50, 20, 90, 1.4, 154}};
    booking.bookingAgeMs = 5000;
    booking.bookingOnBoardMs = 2000;

    FleetDelta unowned = booking; // no rider, no token, no price: the null forms
    unowned.booking.riderId = QString();
    unowned.booking.riderTokenHash = QByteArray();
    unowned.price.reset();

    FleetDelta claim;
    claim.kind = FleetDelta::Kind::Claim;
    claim.origin = cars.origin;
    claim.booking.id = 77;
    claim.booking.carId = 12;

    const QByteArray message = encodeFleetMessage(cars.origin, {encodeFleetDelta(cars), encodeFleetDelta(booking),
                                                                encodeFleetDelta(unowned), encodeFleetDelta(claim)});
    const QByteArray expected = QByteArray::fromHex(
        "544346440305010203040506070800000004000000b45443464403010102030405060708000000020000002a404cdae1"
        "47ae147b4027eb851eb851ec4056a00000000000403f4000000000000300000000000000070000018bcfe5687b40c81c"
        "c0000000000000002b404cdae147ae147b4027eb851eb851ec4056a00000000000403f40000000000003000000000000"
        "00070000018bcfe5687b40c81cc000000000000000010000002b0123456789abcdef000004d3404c6400000000000000"
        "000000000000000000000000010954434644030201020304050607080000000000100000030000000300000012007200"
        "69006400650072002d00e500e400f6404cd9999999999a4027cccccccccccd01404cdc28f5c28f5c4027fae147ae147b"
        "0000000c00000000000000010000000000000002000000000000000300000000000000000000000000000000406f5000"
        "000000000000000000000000000000046868686801404cdd70a3d70a3d4027f5c28f5c28f60000000000000000013ff6"
        "66666666666601409c2000000000004072c0000000000040440000000000004049000000000000403400000000000040"
        "568000000000003ff66666666666664063400000000000000000000000138800000000000007d0000000aa5443464403"
        "02010203040506070800000000001000000300000003ffffffff404cd9999999999a4027cccccccccccd01404cdc28f5"
        "c28f5c4027fae147ae147b0000000c000000000000000100000000000000020000000000000003000000000000000000"
        "00000000000000406f5000000000000000000000000000ffffffff01404cdd70a3d70a3d4027f5c28f5c28f600000000"
        "0000000000000000000000138800000000000007d00000001a5443464403030102030405060708000000000000004d00"
        "00000c");
    QCOMPARE(message.toHex(), expected.toHex());
    const auto back = decodeFleetMessage(expected);
    QVERIFY(back && back->size() == 4);
    QCOMPARE((*back)[0].cars[0].road.offsetM, 56.78125);
    QCOMPARE((*back)[0].cars[1].id, 43);
    QCOMPARE((*back)[0].deviceCars, std::vector<int>{43});
    QCOMPARE((*back)[1].booking.riderId, b.riderId);
    QCOMPARE((*back)[1].booking.riderTokenHash, b.riderTokenHash);
    QCOMPARE((*back)[1].price->quote.total, 154.0);
    QCOMPARE((*back)[1].bookingOnBoardMs, qint64(2000));
    QVERIFY((*back)[2].booking.riderId.isNull() && (*back)[2].booking.riderTokenHash.isNull() && !(*back)[2].price);
    QCOMPARE((*back)[3].booking.carId, 12);
    QCOMPARE(encodeCar(c).toHex(), QByteArray("0000002a404cdae147ae147b4027eb851eb851ec4056a00000000000403f400000000000"
                                              "0300000000000000070000018bcfe5687b40c81cc000000000"));
    QCOMPARE(decodeCar(encodeCar(c))->speedKmh, c.speedKmh);
}

void ClusterFleetCopyTest::roadPlacesTravelWithTheirCitysChecksum()
{
    FleetDelta cars;
    cars.origin = 3;
    CarSnapshot located;
    located.id = 1;
    located.position = {57.71, 11.96};
    located.updatedMs = 1'700'000'000'000;
    located.road = {true, 1234, 56.78125};
    CarSnapshot unlocated = located;
    unlocated.id = 2;
    unlocated.road = {};
    cars.cars = {located, unlocated};
    cars.deviceCars = {2};
    cars.placesKey = 0x0123456789abcdefULL;
    const QByteArray bytes = encodeFleetDelta(cars);
    const auto back = decodeFleetDelta(bytes);
    QVERIFY(back);
    QCOMPARE(back->placesKey, cars.placesKey);
    QVERIFY(back->cars[0].road.located);
    QCOMPARE(back->cars[0].road.segment, 1234u);
    QCOMPARE(back->cars[0].road.offsetM, 56.78125);
    QVERIFY(!back->cars[1].road.located);
    QCOMPARE(back->deviceCars, std::vector<int>{2});
    QCOMPARE(encodeFleetDelta(*back), bytes);

    // No city (checksum 0): no places on the wire, and none read back.
    cars.placesKey = 0;
    const QByteArray placeless = encodeFleetDelta(cars);
    QCOMPARE(placeless.size(), bytes.size() - 2 * (4 + 8));
    const auto placelessBack = decodeFleetDelta(placeless);
    QVERIFY(placelessBack);
    QVERIFY(!placelessBack->cars[0].road.located);
    // A node of the previous release ends the delta after its device cars: read, without places.
    const auto older = decodeFleetDelta(placeless.chopped(8));
    QVERIFY(older);
    QCOMPARE(older->placesKey, quint64(0));
    QVERIFY(!older->cars[0].road.located);
    QCOMPARE(older->deviceCars, std::vector<int>{2});

    // Places cut short, or an offset that is no distance, refuse the delta.
    QVERIFY(!decodeFleetDelta(bytes.chopped(1)));
    QVERIFY(!decodeFleetDelta(bytes.chopped(12)));
    for (const double offset :
         {-1.0, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
        cars.placesKey = 7;
        cars.cars[0].road.offsetM = offset;
        QVERIFY2(!decodeFleetDelta(encodeFleetDelta(cars)), qPrintable(QString::number(offset)));
    }
}

void ClusterFleetCopyTest::unreadableDeltasAreRefused()
{
    QVERIFY(!decodeFleetDelta(QByteArray()));
    QVERIFY(!decodeFleetDelta(QByteArrayLiteral("not a delta at all, just bytes")));
    FleetDelta one;
    one.cars.resize(3);
    QByteArray bytes = encodeFleetDelta(one);
    QVERIFY(decodeFleetDelta(bytes));
    QVERIFY(!decodeFleetDelta(bytes.left(bytes.size() - 1))); // truncated
    QByteArray otherMagic = bytes;
    otherMagic[0] = char(otherMagic[0] ^ 0x55);
    QVERIFY(!decodeFleetDelta(otherMagic));
    // A count that promises more cars than the bytes hold is refused before anything is allocated.
    QByteArray lying = bytes;
    const int countAt = 4 + 1 + 1 + 8;
    lying[countAt] = char(0x00);
    lying[countAt + 1] = char(0x01); // 65,536+ cars in a message of three
    QVERIFY(!decodeFleetDelta(lying));
    // A claim must name a car.
    FleetDelta claim;
    claim.kind = FleetDelta::Kind::Claim;
    claim.booking.id = 5;
    QVERIFY(!decodeFleetDelta(encodeFleetDelta(claim)));
    claim.booking.carId = 1;
    QVERIFY(!decodeFleetDelta(encodeFleetDelta(claim).chopped(1)));
}

// A state that does not exist, a NaN or a place off the globe never reaches a node's copy (nor the
// answers built from it): the delta carrying it is refused whole, like an unreadable one.
void ClusterFleetCopyTest::implausibleValuesAreRefused()
{
    FleetDelta cars;
    cars.cars.resize(2);
    cars.cars[1].id = 2;
    QVERIFY(decodeFleetDelta(encodeFleetDelta(cars)));
    const auto refusedWith = [&](const std::function<void(CarSnapshot &)> &spoil) {
        FleetDelta bad = cars;
        spoil(bad.cars[1]);
        return !decodeFleetDelta(encodeFleetDelta(bad)) && !decodeCar(encodeCar(bad.cars[1]))
               && !decodeFleetMessage(encodeFleetMessage(0, {encodeFleetDelta(cars), encodeFleetDelta(bad)}));
    };
    QVERIFY(refusedWith([](CarSnapshot &c) { c.state = static_cast<CarState>(200); }));
    QVERIFY(refusedWith([](CarSnapshot &c) { c.position.lat = std::nan(""); }));
    QVERIFY(refusedWith([](CarSnapshot &c) { c.position.lng = 181; }));
    QVERIFY(refusedWith([](CarSnapshot &c) { c.position.lat = -std::numeric_limits<double>::infinity(); }));
    QVERIFY(refusedWith([](CarSnapshot &c) { c.speedKmh = std::numeric_limits<float>::quiet_NaN(); }));
    QVERIFY(refusedWith([](CarSnapshot &c) { c.tripM = std::numeric_limits<double>::infinity(); }));
    QVERIFY(refusedWith([](CarSnapshot &c) { c.tripM = -1; }));

    FleetDelta booking;
    booking.kind = FleetDelta::Kind::Booking;
    booking.booking.id = 3;
    booking.booking.state = BookingState::Expired; // the last state there is
    QVERIFY(decodeFleetDelta(encodeFleetDelta(booking)));
    const auto bookingRefusedWith = [&](const std::function<void(FleetDelta &)> &spoil) {
        FleetDelta bad = booking;
        spoil(bad);
        return !decodeFleetDelta(encodeFleetDelta(bad));
    };
    QVERIFY(bookingRefusedWith([](FleetDelta &d) { d.booking.state = static_cast<BookingState>(7); }));
    QVERIFY(bookingRefusedWith([](FleetDelta &d) { d.booking.pickup.lng = std::nan(""); }));
    QVERIFY(bookingRefusedWith([](FleetDelta &d) { d.booking.dropoff.lat = 91; }));
    QVERIFY(bookingRefusedWith([](FleetDelta &d) { d.booking.fare = std::numeric_limits<double>::infinity(); }));
    QVERIFY(bookingRefusedWith([](FleetDelta &d) { d.price = BookingPrice{std::nan(""), false, 0, 0, {}}; }));
}

namespace {
// Node 4's claim of car 7 for booking 10.
FleetDelta claimOfCar7()
{
    FleetDelta claim;
    claim.kind = FleetDelta::Kind::Claim;
    claim.origin = 4;
    claim.booking.id = 10;
    claim.booking.carId = 7;
    return claim;
}
} // namespace

void ClusterFleetCopyTest::aMessageCarriesSeveralDeltasInOrder()
{
    const FleetDelta claim = claimOfCar7();
    FleetDelta booking;
    booking.kind = FleetDelta::Kind::Booking;
    booking.origin = 4;
    booking.booking.id = 10;
    booking.booking.carId = 7;
    booking.booking.state = BookingState::Assigned;
    FleetDelta cars;
    cars.origin = 4;
    cars.cars.resize(2);
    cars.cars[1].id = 3;
    // A lone delta is sent as it is: nodes that read single deltas read it.
    const QByteArray lone = encodeFleetMessage(4, {encodeFleetDelta(claim)});
    QCOMPARE(lone, encodeFleetDelta(claim));
    QCOMPARE(decodeFleetMessage(lone)->size(), std::size_t(1));
    const auto back = decodeFleetMessage(
        encodeFleetMessage(4, {encodeFleetDelta(cars), encodeFleetDelta(claim), encodeFleetDelta(booking)}));
    QVERIFY(back);
    QCOMPARE(back->size(), std::size_t(3));
    QCOMPARE(back->at(0).kind, FleetDelta::Kind::Cars);
    QCOMPARE(back->at(0).cars.at(1).id, 3);
    QCOMPARE(back->at(1).kind, FleetDelta::Kind::Claim);
    QCOMPARE(back->at(1).booking.carId, 7);
    QCOMPARE(back->at(2).kind, FleetDelta::Kind::Booking);
    QCOMPARE(back->at(2).booking.state, BookingState::Assigned);
    for (const FleetDelta &delta : *back)
        QCOMPARE(delta.origin, quint64(4));
}

void ClusterFleetCopyTest::unreadableMessagesAreRefused()
{
    const QByteArray part = encodeFleetDelta(claimOfCar7());
    const QByteArray two = encodeFleetMessage(4, {part, part});
    QVERIFY(decodeFleetMessage(two));
    QVERIFY(!decodeFleetDelta(two));                                   // a batch is not one delta
    QVERIFY(!decodeFleetMessage(two.chopped(1)));                      // truncated
    QVERIFY(!decodeFleetMessage(two + QByteArrayLiteral("junk")));     // trailing bytes
    QVERIFY(!decodeFleetMessage(encodeFleetMessage(5, {part, part}))); // parts of another node
    QVERIFY(!decodeFleetMessage(encodeFleetMessage(4, {part, two})));  // a batch in a batch
    QVERIFY(!decodeFleetMessage(encodeFleetMessage(4, {part, QByteArrayLiteral("not a delta")})));
    // Counts and sizes that promise more than the bytes hold are refused before anything is read.
    const int countAt = 4 + 1 + 1 + 8;
    QByteArray many = two;
    many[countAt] = char(0x7f); // two billion parts
    QVERIFY(!decodeFleetMessage(many));
    QByteArray none = two;
    none[countAt + 3] = char(0); // zero parts
    QVERIFY(!decodeFleetMessage(none));
    QByteArray longPart = two;
    longPart[countAt + 4] = char(0x7f); // the first part's size: far past the end
    QVERIFY(!decodeFleetMessage(longPart));
}

void ClusterFleetCopyTest::idsComeFromTheSourceAndZeroRefusesTheBooking()
{
    Node node = makeNode(3);
    uint64_t next = 5000;
    node.fleet->setIdSource([&next] { return next++; });
    const auto first = node.fleet->book(QStringLiteral("r1"), kCentre, std::nullopt, 5000, etaByDistance);
    QCOMPARE(first.result, FleetStore::BookResult::Booked);
    QCOMPARE(first.booking.id, uint64_t(5000));
    QCOMPARE(node.fleet->recentBookings(5).front().id, uint64_t(5000));
    node.fleet->setIdSource([] { return uint64_t(0); }); // the database is down
    const auto refused = node.fleet->book(QStringLiteral("r2"), kCentre, std::nullopt, 5000, etaByDistance);
    QCOMPARE(refused.result, FleetStore::BookResult::IdsUnavailable);
    // The car it had reserved is free again.
    QCOMPARE(carState(node, 2), CarState::Available);
    QCOMPARE(carState(node, 3), CarState::Available);
}

void ClusterFleetCopyTest::aRemoteBookingTakesItsCarAndStatesOnlyMoveForward()
{
    Node a = makeNode(3), b = makeNode(3);
    const auto booked = a.fleet->book(QStringLiteral("r1"), kCentre, std::nullopt, 5000, etaByDistance);
    QCOMPARE(booked.result, FleetStore::BookResult::Booked);
    const int car = booked.booking.carId;
    QVERIFY(b.fleet->applyRemoteBooking(*a.fleet->booking(booked.booking.id)));
    QCOMPARE(carState(b, car), CarState::ToPickup);
    QCOMPARE(b.fleet->car(car)->bookingId, booked.booking.id);
    QCOMPARE(b.fleet->booking(booked.booking.id)->riderId, QStringLiteral("r1"));
    // B books too: never A's car.
    const auto other = b.fleet->book(QStringLiteral("r2"), kCentre, std::nullopt, 5000, etaByDistance);
    QCOMPARE(other.result, FleetStore::BookResult::Booked);
    QVERIFY(other.booking.carId != car);

    // The car reaches the pickup on A: arriving on B too once announced.
    a.fleet->updatePosition(car, kCentre, 0, 0, false);
    QCOMPARE(a.fleet->booking(booked.booking.id)->state, BookingState::Arriving);
    QVERIFY(b.fleet->applyRemoteBooking(*a.fleet->booking(booked.booking.id)));
    QCOMPARE(carState(b, car), CarState::Waiting);
    // A picks up; B hears it, then hears the older "assigned" again (another node's late message).
    QCOMPARE(a.fleet->pickup(booked.booking.id).result, FleetStore::TransitionResult::Done);
    const BookingSnapshot onTrip = *a.fleet->booking(booked.booking.id);
    QVERIFY(b.fleet->applyRemoteBooking(onTrip));
    QCOMPARE(carState(b, car), CarState::OnTrip);
    QVERIFY(b.fleet->applyRemoteBooking(booked.booking)); // stale: ignored
    QCOMPARE(b.fleet->booking(booked.booking.id)->state, BookingState::OnTrip);
    QCOMPARE(carState(b, car), CarState::OnTrip);

    // Completed on A: the car is free on B too, and a late "on trip" does not take it again.
    QCOMPARE(a.fleet->complete(booked.booking.id, [](double, double) { return 99.0; }).result,
             FleetStore::TransitionResult::Done);
    QVERIFY(b.fleet->applyRemoteBooking(*a.fleet->booking(booked.booking.id)));
    QCOMPARE(b.fleet->booking(booked.booking.id)->state, BookingState::Completed);
    QCOMPARE(b.fleet->booking(booked.booking.id)->fare, 99.0);
    QCOMPARE(carState(b, car), CarState::Available);
    QVERIFY(b.fleet->applyRemoteBooking(onTrip));
    QCOMPARE(carState(b, car), CarState::Available);
}

void ClusterFleetCopyTest::aRemoteReassignmentMovesTheCar()
{
    Node a = makeNode(3), b = makeNode(3);
    const auto booked = a.fleet->book(QStringLiteral("r1"), kCentre, std::nullopt, 5000, etaByDistance);
    QVERIFY(b.fleet->applyRemoteBooking(booked.booking));
    const int firstCar = booked.booking.carId;
    const auto moved = a.fleet->reassign(booked.booking.id, 3, 5000, etaByDistance);
    QCOMPARE(moved.result, FleetStore::ReassignResult::Done);
    QVERIFY(b.fleet->applyRemoteBooking(moved.booking));
    QCOMPARE(b.fleet->booking(booked.booking.id)->carId, 3);
    QCOMPARE(carState(b, 3), CarState::ToPickup);
    QCOMPARE(carState(b, firstCar), CarState::Available);
}

// A node's reassign commits; before its writer settles it, a resync brings the ledger's row (the
// booking on the new car) or another node's cancel arrives. The settle must neither free the car
// the booking has now nor reopen an ended booking.
void ClusterFleetCopyTest::aReassignSettledAfterTheCopyHeardItKeepsTheNewCar()
{
    Node a = makeNode(3);
    const auto booked = a.fleet->book(QStringLiteral("r1"), kCentre, std::nullopt, 5000, etaByDistance);
    const int firstCar = booked.booking.carId;
    const auto begun = a.fleet->beginReassign(booked.booking.id, 3, 5000, etaByDistance);
    QCOMPARE(begun.result, FleetStore::ReassignResult::Done);
    BookingSnapshot fromLedger = *a.fleet->booking(booked.booking.id);
    fromLedger.carId = 3;
    QVERIFY(a.fleet->applyRemoteBooking(fromLedger));
    a.fleet->settleReassign(begun, true);
    QCOMPARE(a.fleet->booking(booked.booking.id)->carId, 3);
    QCOMPARE(carState(a, 3), CarState::ToPickup);
    QCOMPARE(a.fleet->car(3)->bookingId, booked.booking.id);
    QCOMPARE(carState(a, firstCar), CarState::Available);

    // Ended elsewhere while a second reassign was in its two steps: it stays ended, no car held.
    const auto again = a.fleet->beginReassign(booked.booking.id, firstCar, 5000, etaByDistance);
    QCOMPARE(again.result, FleetStore::ReassignResult::Done);
    BookingSnapshot cancelled = *a.fleet->booking(booked.booking.id);
    cancelled.state = BookingState::Cancelled;
    cancelled.endedMs = cancelled.createdMs + 1;
    QVERIFY(a.fleet->applyRemoteBooking(cancelled));
    a.fleet->settleReassign(again, true);
    QCOMPARE(a.fleet->booking(booked.booking.id)->state, BookingState::Cancelled);
    QCOMPARE(carState(a, 3), CarState::Available);
    QCOMPARE(carState(a, firstCar), CarState::Available);
}

void ClusterFleetCopyTest::aHeldCarIsNoCandidateUntilItsBookingArrives()
{
    Node a = makeNode(3), b = makeNode(3);
    // The database told B that car 1 (the nearest) is someone else's, before that booking's
    // announcement reached B.
    b.fleet->holdCar(1);
    const auto second = b.fleet->book(QStringLiteral("r2"), kCentre, std::nullopt, 5000, etaByDistance);
    QCOMPARE(second.booking.carId, 2);
    const auto winner = a.fleet->book(QStringLiteral("r1"), kCentre, std::nullopt, 5000, etaByDistance);
    QCOMPARE(winner.booking.carId, 1);
    QVERIFY(b.fleet->applyRemoteBooking(winner.booking));
    QCOMPARE(b.fleet->car(1)->bookingId, winner.booking.id);
    // When that booking ends, B can book car 1 again.
    QCOMPARE(a.fleet->cancel(winner.booking.id).result, FleetStore::TransitionResult::Done);
    QVERIFY(b.fleet->applyRemoteBooking(*a.fleet->booking(winner.booking.id)));
    QCOMPARE(carState(b, 1), CarState::Available);
}

void ClusterFleetCopyTest::aLocalBookingThatLostItsClaimDoesNotFreeTheWinnersCar()
{
    Node a = makeNode(2), b = makeNode(2);
    uint64_t aIds = 100, bIds = 200; // ids from the cluster's sequence: distinct across nodes
    a.fleet->setIdSource([&aIds] { return aIds++; });
    b.fleet->setIdSource([&bIds] { return bIds++; });
    // Both nodes reserve car 1 in their own copy; the database gives it to A.
    const auto mine = b.fleet->book(QStringLiteral("loser"), kCentre, std::nullopt, 5000, etaByDistance);
    const auto winner = a.fleet->book(QStringLiteral("winner"), kCentre, std::nullopt, 5000, etaByDistance);
    QCOMPARE(mine.booking.carId, 1);
    QCOMPARE(winner.booking.carId, 1);
    // A's announcement reaches B before B's ledger reports the lost claim.
    QVERIFY(b.fleet->applyRemoteBooking(winner.booking));
    b.fleet->cancel(mine.booking.id); // what the API does on car_taken
    b.fleet->carTakenElsewhere(1);
    QCOMPARE(b.fleet->car(1)->bookingId, winner.booking.id);
    QCOMPARE(carState(b, 1), CarState::ToPickup);
    QCOMPARE(b.fleet->booking(mine.booking.id)->state, BookingState::Cancelled);
}

void ClusterFleetCopyTest::aResyncLeavesACarTakenByABookingInFlight()
{
    Node node = makeNode(2);
    // A resync (ClusterResync, on the node's main thread) frees the cars held for other nodes'
    // bookings that never arrived. It runs while a booking on another thread has taken its car and
    // waits for its id from the database.
    int freedMeanwhile = -1;
    uint64_t next = 300;
    node.fleet->setIdSource([&] {
        freedMeanwhile = node.fleet->releaseHeldCars();
        return next++;
    });
    const auto booked = node.fleet->book(QStringLiteral("r1"), kCentre, std::nullopt, 5000, etaByDistance);
    QCOMPARE(booked.result, FleetStore::BookResult::Booked);
    QCOMPARE(booked.booking.carId, 1);
    QCOMPARE(freedMeanwhile, 0); // the car is the booking's, not a held one
    QCOMPARE(carState(node, 1), CarState::ToPickup);
    QCOMPARE(node.fleet->car(1)->bookingId, booked.booking.id);
    // It is no candidate for the next booking.
    node.fleet->setIdSource([&next] { return next++; });
    const auto second = node.fleet->book(QStringLiteral("r2"), kCentre, std::nullopt, 5000, etaByDistance);
    QCOMPARE(second.booking.carId, 2);
}

void ClusterFleetCopyTest::aRemoteBookingOfTheCarABookingIsTakingSendsItToTheNext()
{
    Node a = makeNode(2), b = makeNode(2);
    uint64_t aIds = 100, bIds = 200;
    a.fleet->setIdSource([&aIds] { return aIds++; });
    const auto winner = a.fleet->book(QStringLiteral("winner"), kCentre, std::nullopt, 5000, etaByDistance);
    QCOMPARE(winner.booking.carId, 1);
    // B takes car 1 for its own booking; while it waits for its id, A's committed booking of car 1
    // arrives (the subscriber's thread) and the database's word is final: car 1 is A's.
    bool arrived = false;
    b.fleet->setIdSource([&] {
        if (!arrived)
            arrived = b.fleet->applyRemoteBooking(winner.booking);
        return bIds++;
    });
    const auto mine = b.fleet->book(QStringLiteral("mine"), kCentre, std::nullopt, 5000, etaByDistance);
    QVERIFY(arrived);
    QCOMPARE(mine.result, FleetStore::BookResult::Booked);
    QCOMPARE(mine.booking.carId, 2);
    QCOMPARE(b.fleet->car(1)->bookingId, winner.booking.id);
    QCOMPARE(b.fleet->car(2)->bookingId, mine.booking.id);
    QCOMPARE(b.fleet->booking(mine.booking.id)->carId, 2);
}

void ClusterFleetCopyTest::remotePositionsApplyOnlyWhenNewerAndNeverMarkAnArrival()
{
    Node a = makeNode(2), b = makeNode(2);
    const auto booked = a.fleet->book(QStringLiteral("r1"), kCentre, std::nullopt, 5000, etaByDistance);
    QVERIFY(b.fleet->applyRemoteBooking(booked.booking));
    CarSnapshot moved = *a.fleet->car(booked.booking.carId);
    const CarSnapshot before = *b.fleet->car(moved.id);
    moved.position = kCentre; // at the pickup
    moved.odometerM = 777;    // A's: B's copy keeps its own, which takes the step
    moved.updatedMs = clock::wallMs() + 1000;
    b.fleet->applyRemotePosition(moved);
    const CarSnapshot seen = *b.fleet->car(moved.id);
    QCOMPARE(seen.position.lat, kCentre.lat);
    QCOMPARE(seen.odometerM, before.odometerM + city::haversineMeters(before.position, kCentre));
    // The node that moved the car marks the arrival and announces it; B's copy does not guess.
    QCOMPARE(b.fleet->booking(booked.booking.id)->state, BookingState::Assigned);
    CarSnapshot older = moved;
    older.position = placeNorth(9);
    older.updatedMs = moved.updatedMs - 1;
    b.fleet->applyRemotePosition(older);
    QCOMPARE(b.fleet->car(moved.id)->position.lat, kCentre.lat);
}

void ClusterFleetCopyTest::aRemoteTripIsMeteredOnThisCopysOdometer()
{
    // The copies' odometers differ (each counts since its own start): B drove car 1 a while.
    Node a = makeNode(2), b = makeNode(2);
    const auto booked = a.fleet->book(QStringLiteral("r1"), kCentre, std::nullopt, 5000, etaByDistance);
    const int car = booked.booking.carId;
    b.fleet->updatePosition(car, {kCentre.lat + 0.05, kCentre.lng}, 0, 0, false);
    QVERIFY(b.fleet->car(car)->odometerM > 5000);
    QVERIFY(b.fleet->applyRemoteBooking(booked.booking));
    a.fleet->updatePosition(car, kCentre, 0, 0, false); // at the pickup: arriving
    QCOMPARE(a.fleet->pickup(booked.booking.id).result, FleetStore::TransitionResult::Done);

    // The pickup arrives with 300 m on board already (A's announce, or a resync's checkpoint).
    BookingSnapshot onTrip = *a.fleet->booking(booked.booking.id);
    onTrip.distanceM = 300;
    QVERIFY(b.fleet->applyRemoteBooking(onTrip));
    const double startOnB = b.fleet->car(car)->odometerM - 300;
    QCOMPARE(b.fleet->booking(onTrip.id)->startOdometerM, startOnB);
    QCOMPARE(b.fleet->booking(onTrip.id)->distanceM, 0.0);
    // Heard again (a resync with an older checkpoint): B meters on from its own start.
    onTrip.distanceM = 10;
    QVERIFY(b.fleet->applyRemoteBooking(onTrip));
    QCOMPARE(b.fleet->booking(onTrip.id)->startOdometerM, startOnB);

    // A 1 km move B applies counts on B's odometer, and B bills 300 m + 1 km.
    CarSnapshot moved = *b.fleet->car(car);
    const LatLng to{moved.position.lat + 1000 / city::haversineMeters({0, 0}, {1, 0}), moved.position.lng};
    moved.position = to;
    moved.odometerM = 1e9; // the sender's: never taken
    moved.updatedMs = clock::wallMs() + 1000;
    b.fleet->applyRemotePosition(moved);
    const auto completed = b.fleet->complete(onTrip.id, [](double metres, double) { return metres; });
    QCOMPARE(completed.result, FleetStore::TransitionResult::Done);
    QVERIFY2(std::abs(completed.booking.distanceM - 1300) < 0.5,
             qPrintable(QString::number(completed.booking.distanceM)));
}

void ClusterFleetCopyTest::aMoveThisCopyMissedIsNotCountedTwice()
{
    // Redis was away while A picked the car up and drove it 5 km: B's copy still holds the car at
    // the pickup when it hears of the trip with its 5 km so far (A's announce, a resync's
    // checkpoint), and only then of the car's new position. The jump from the pickup is the 5 km
    // it counted already: the position's metres on board (A's count there) are taken instead.
    Node a = makeNode(2), b = makeNode(2);
    const auto booked = a.fleet->book(QStringLiteral("r1"), kCentre, std::nullopt, 5000, etaByDistance);
    const int car = booked.booking.carId;
    a.fleet->updatePosition(car, kCentre, 0, 0, false);
    QVERIFY(b.fleet->applyRemotePosition(*a.fleet->car(car)) != SharedMemoryFleet::RemotePosition::Stale);
    QCOMPARE(a.fleet->pickup(booked.booking.id).result, FleetStore::TransitionResult::Done);
    const double metrePerDegree = city::haversineMeters({0, 0}, {1, 0});
    const LatLng away{kCentre.lat + 5000 / metrePerDegree, kCentre.lng};
    a.fleet->updatePosition(car, away, 0, 0, false);
    const double drivenOnA = metresOnBoard(*a.fleet->booking(booked.booking.id), a.fleet->car(car)->odometerM);
    QVERIFY(std::abs(drivenOnA - 5000) < 1);

    BookingSnapshot onTrip = *a.fleet->booking(booked.booking.id);
    onTrip.distanceM = drivenOnA;
    QVERIFY(b.fleet->applyRemoteBooking(onTrip));
    CarSnapshot moved = *a.fleet->car(car);
    moved.tripM = drivenOnA; // as ClusterFleet sends it
    moved.updatedMs = clock::wallMs() + 1000;
    b.fleet->applyRemotePosition(moved);
    // 500 m more, applied step by step as usual.
    moved.position = {away.lat + 500 / metrePerDegree, away.lng};
    moved.tripM = drivenOnA + 500;
    moved.updatedMs += 1000;
    b.fleet->applyRemotePosition(moved);
    const auto completed = b.fleet->complete(onTrip.id, [](double metres, double) { return metres; });
    QCOMPARE(completed.result, FleetStore::TransitionResult::Done);
    QVERIFY2(std::abs(completed.booking.distanceM - 5500) < 1,
             qPrintable(QStringLiteral("billed %1 m for 5500 m driven").arg(completed.booking.distanceM)));
}

QTEST_GUILESS_MAIN(ClusterFleetCopyTest)
#include "cluster_fleet_copy_test.moc"
