#include "http/TaxiApi.h"

#include "dispatch/FleetLedger.h"
#include "fleet/FleetStore.h"
#include "city/Geo.h"
#include "wire/ApiError.h"
#include "http/BookingOwnership.h"
#include "http/BookingView.h"
#include "http/CarsHeldElsewhere.h"
#include "http/IdempotencyKey.h"
#include "http/JsonViews.h"
#include "http/OperatorAccess.h"
#include "wire/RequestInput.h"
#include "http/RouteTable.h"
#include "wire/SecretToken.h"
#include "ledger/Ledger.h"
#include "ledger/LedgerErrors.h"
#include "pricing/PricedRide.h"
#include "pricing/PricingBoard.h"
#include "pricing/TripEstimator.h"

#include <QDebug>
#include <QJsonArray>
#include <algorithm>
#include <cmath>

namespace taxicore {

namespace {

constexpr double kDefaultNearbyRadiusM = 1000;
constexpr double kMaxNearbyRadiusM = 50'000;
constexpr int kDefaultNearbyLimit = 20;
constexpr int kMaxNearbyLimit = 1000;
// A booking takes the nearest available car anywhere in the service area.
constexpr double kBookingSearchRadiusM = 60'000;
// A booking whose id the ledger found taken by another booking (an id handed out twice) is tried
// again under a fresh id this many times: after the first, the node's ids come from a fresh block
// above every booking, so more than one retry means the ids are still wrong; the rider gets 503.
constexpr int kBookingIdTries = 3;
// A keyed booking that found no car while cars are held for other nodes' uncommitted bookings
// waits this long for those commits (normally milliseconds) on the lookup thread, which serves
// nothing else meanwhile: short, and answered idempotency_key_in_progress past it.
constexpr int kOtherNodesCommitWaitMs = 500;

// The booking a rider endpoint names, once the request shows a token: refused before any lookup,
// so that without a token a booking that exists and one that does not answer alike.
uint64_t riderBookingId(const ApiRequest &request)
{
    const auto id = pathId(request, 0, "booking");
    requireRiderToken(request, id);
    return id;
}

// A keyed booking whose key's booking is still being made (on this node, or another node of a
// cluster): its retry with the same key will be answered with that booking.
ApiResponse keyInProgressResponse()
{
    ApiResponse wait = errorResponse(409, "idempotency_key_in_progress",
                                     QStringLiteral("the first request with this Idempotency-Key is "
                                                    "still being recorded; send it again with the same key"));
    wait.headers.append({QByteArrayLiteral("Retry-After"), QByteArrayLiteral("1")});
    return wait;
}

// Why a booking got no car (FleetStore::book's result other than Booked).
ApiResponse bookingRefusal(FleetStore::BookResult result)
{
    switch (result) {
    case FleetStore::BookResult::NoCarAvailable:
        return errorResponse(409, "no_car_available",
                             QStringLiteral("no car is available near the pickup; try again shortly"));
    case FleetStore::BookResult::CapacityFull:
        return errorResponse(503, "booking_capacity", QStringLiteral("too many open bookings; try again shortly"));
    default:
        return errorResponse(
            503, "ledger_unavailable",
            QStringLiteral("the booking could not be recorded durably: the cluster's database is unavailable"));
    }
}

} // namespace

// What a booking transition endpoint answers with: the result and the action it asked for.
struct BookingTransitionView {
    FleetStore::Transition transition;
    uint64_t id;
    const char *wants; // the state the action needs
};

TaxiApi::TaxiApi(FleetStore &fleet, const TripEstimator &estimator, Ledger *ledger)
    : m_fleet(fleet)
    , m_estimator(estimator)
    , m_ledger(ledger)
    , m_rateLimiter(fleet.control().access)
    , m_openBookings(fleet.control().access, fleet)
{
    if (m_ledger)
        m_lookups.setLocation(m_ledger->location());
}

ApiResponse TaxiApi::afterCommit(const ApiRequest &request, LedgerRecord record, ApiResponse response,
                                 std::function<void(bool committed)> settled) const
{
    if (!m_ledger) {
        if (settled)
            settled(true);
        return response;
    }
    m_ledger->append(std::move(record), [reply = request.reply, response = std::move(response),
                                         settled = std::move(settled),
                                         ledger = m_ledger](bool committed, const QString &error) {
        if (settled)
            settled(committed);
        if (committed) {
            (*reply)(response);
            return;
        }
        // In a cluster another node may have moved the booking first (the ledger's CAS on its state).
        if (error.startsWith(QLatin1String(kLedgerBookingMoved))) {
            (*reply)(errorResponse(409, "booking_moved",
                                   QStringLiteral("another node moved this booking meanwhile: %1").arg(error)));
            return;
        }
        (*reply)(errorResponse(503, "ledger_unavailable",
                               QStringLiteral("the booking could not be recorded durably: %1")
                                   .arg(ledgerFailureReason(error, ledger->location()))));
    });
    return deferredResponse();
}

ApiResponse TaxiApi::settleAfterCommit(const ApiRequest &request, LedgerRecord record, ApiResponse response,
                                       const BookingTransitionView &view) const
{
    return afterCommit(request, std::move(record), std::move(response),
                       [fleet = &m_fleet, move = view.transition](bool committed) { fleet->settle(move, committed); });
}

void TaxiApi::registerRoutes(RouteTable &router)
{
    router.add(HttpMethod::Put, "/api/v1/cars/{id}/position", [this](const ApiRequest &r) { return putPosition(r); });
    router.add(HttpMethod::Get, "/api/v1/cars/nearby", [this](const ApiRequest &r) { return nearby(r); });
    router.add(HttpMethod::Post, "/api/v1/bookings", [this](const ApiRequest &r) { return createBooking(r); });
    router.add(HttpMethod::Get, "/api/v1/bookings/{id}", [this](const ApiRequest &r) { return getBooking(r); });
    router.add(HttpMethod::Post, "/api/v1/bookings/{id}/pickup", [this](const ApiRequest &r) { return pickup(r); });
    router.add(HttpMethod::Post, "/api/v1/bookings/{id}/complete", [this](const ApiRequest &r) { return complete(r); });
    router.add(HttpMethod::Post, "/api/v1/bookings/{id}/cancel", [this](const ApiRequest &r) { return cancel(r); });
    router.add(HttpMethod::Get, "/api/v1/quote", [this](const ApiRequest &r) { return quote(r); });
}

ApiResponse TaxiApi::putPosition(const ApiRequest &request)
{
    // A report moves the car and can mark its booking arriving: only the car's device (issue 15).
    requireDevice(request);
    const auto id = pathId(request, 0, "car");
    const PositionReport report = readPositionReport(readJsonObject(request));
    if (id > uint64_t(m_fleet.carCount()))
        throwApiError(404, "car_not_found", QStringLiteral("there is no car %1").arg(id));
    const auto before = m_fleet.car(int(id));
    const auto waiting = before && before->bookingId ? m_fleet.booking(before->bookingId) : std::nullopt;
    const auto car =
        m_fleet.updatePosition(int(id), report.position, float(report.heading), float(report.speedKmh), true);
    // The report brought the car to its pickup: the booking's arrival is recorded like every move,
    // and a 503 leaves the booking as it was (the device's next report arrives again).
    if (waiting && waiting->state == BookingState::Assigned)
        if (const auto now = m_fleet.booking(waiting->id); now && now->state == BookingState::Arriving)
            return afterCommit(request, transitionRecord(*now), jsonResponse(carJson(*car)),
                               [fleet = &m_fleet, id = now->id, carId = now->carId](bool committed) {
                                   if (!committed)
                                       fleet->undoArrival(id, carId);
                               });
    return jsonResponse(carJson(*car));
}

ApiResponse TaxiApi::nearby(const ApiRequest &request) const
{
    const LatLng centre = queryPoint(request, "");
    const double radius = queryNumber(request, "radius_m", 1, kMaxNearbyRadiusM, kDefaultNearbyRadiusM);
    const int limit = int(queryNumber(request, "limit", 1, kMaxNearbyLimit, kDefaultNearbyLimit));
    const std::vector<NearbyCar> found = m_fleet.nearby(centre, radius, limit);
    ApiResponse response;
    response.body = nearbyJson(found, m_estimator.carEtasTo(centre, found));
    return response;
}

ApiResponse TaxiApi::createBooking(const ApiRequest &request)
{
    // Operators and this machine's own clients are not limited (the console books for many riders).
    const bool unlimited = isTrustedLoopback(request) || carriesAdminToken(request);
    const auto book = [this, request, unlimited] {
        const BookingOrder order = readBookingOrder(readJsonObject(request));
        // Shown once: only its hash is kept (region, ledger); it proves ownership of the booking.
        // With an Idempotency-Key it derives from the key, so a retry can be shown it again.
        const std::optional<QByteArray> keyToken = riderTokenForIdempotencyKey(request.idempotencyKey);
        const QByteArray riderToken = keyToken ? *keyToken : randomHexToken(16);
        if (keyToken && !m_ledger)
            throwApiError(503, "idempotency_unavailable",
                          QStringLiteral("this server keeps no ledger to find the booking an Idempotency-Key made"));
        // Priced with the pickup zone's surge now; that quote is the fare the rider will pay.
        PricingBoard pricing(m_fleet.pricing());
        const RidePrice price = priceRide(pricing, m_estimator, order.pickup, order.dropoff);
        std::shared_ptr<OpenBookingsPerClient::Place> place;
        if (!unlimited && !(place = m_openBookings.hold(request.remote))) {
            const ApiResponse full = errorResponse(
                429, "too_many_open_bookings",
                QStringLiteral("this client has %1 bookings open, the most one client may hold at once; cancel one "
                               "or wait for a ride to end")
                    .arg(m_openBookings.limit()));
            if (!keyToken)
                throw ApiException{full};
            // A retry of one of those bookings (its answer was lost) is answered with it.
            answerWithKeyedBooking(
                request.reply,
                std::make_shared<const PendingBooking>(PendingBooking{order, riderToken, price, true, nullptr}), full);
            return deferredResponse();
        }
        // A keyed booking is booked like any other: its commit claims the key, and a key that made
        // a booking already (a retry, or the same request at once) is refused there and answered
        // with that booking. No read before: a retry is rare, a booking is not.
        return placeBooking(request.reply,
                            std::make_shared<const PendingBooking>(
                                PendingBooking{order, riderToken, price, keyToken.has_value(), std::move(place)}),
                            kBookingIdTries);
    };
    if (unlimited)
        return book();
    // A cluster's shared buckets answer later, from Redis: the booking goes on from there.
    const std::optional<int> retryAfterS = m_limiter->take(request.remote, [book, reply = request.reply](int after) {
        try {
            const ApiResponse answer = after > 0 ? tooManyBookingsResponse(after) : book();
            if (answer.status != ApiResponse::kDeferred)
                (*reply)(answer);
        } catch (const ApiException &refused) {
            (*reply)(refused.response);
        } catch (const std::exception &e) {
            (*reply)(errorResponse(500, "internal_error", QString::fromLocal8Bit(e.what())));
        }
    });
    if (!retryAfterS)
        return deferredResponse();
    if (*retryAfterS > 0)
        throw ApiException{tooManyBookingsResponse(*retryAfterS)};
    return book();
}

ApiResponse TaxiApi::placeBooking(const std::shared_ptr<const DeferredReply> &reply,
                                  const std::shared_ptr<const PendingBooking> &pending, int idTries,
                                  int refusedCar) const
{
    const BookingOrder &order = pending->order;
    const auto booked = m_fleet.book(
        order.riderId, order.pickup, order.dropoff, kBookingSearchRadiusM,
        [this](LatLng target, const std::vector<LatLng> &cars) { return m_estimator.etasTo(target, cars); },
        tokenHash(pending->riderToken));
    // A cluster's fleet holds a car the ledger gave another node (carTakenElsewhere), so the next
    // try takes another. A fleet that cannot (nodes sharing a PostgreSQL ledger without a shared
    // --fleet) offers the same car again: tried again, it was refused for ever, the rider's request
    // hanging and the database hammered. The booking ends here instead, and the operator is told why.
    const bool sameCarAgain = booked.result == FleetStore::BookResult::Booked && booked.booking.carId == refusedCar;
    if (sameCarAgain) {
        m_fleet.withdraw(booked.booking.id);
        qWarning().noquote() << QStringLiteral(
                                    "booking: the ledger gave car %1 to a booking this node cannot see (another node "
                                    "on this ledger?); nodes sharing one ledger need a shared fleet (--fleet redis://)")
                                    .arg(refusedCar);
    }
    if (booked.result != FleetStore::BookResult::Booked || sameCarAgain) {
        const ApiResponse refused =
            sameCarAgain ? errorResponse(409, "no_car_available",
                                         QStringLiteral("car %1, the nearest, is taken by a booking this server does "
                                                        "not know of; try again shortly")
                                             .arg(refusedCar))
                         : bookingRefusal(booked.result);
        // A retry finds no car because its first try has it: the key's booking is the answer.
        if (!pending->keyed)
            throw ApiException{refused};
        answerWithKeyedBooking(reply, pending, refused);
        return deferredResponse();
    }
    const RidePrice &price = pending->price;
    PricingBoard(m_fleet.pricing()).recordBookingPrice(booked.booking.id, price.kept);

    QJsonObject out = bookingJson(booked.booking);
    out.insert(QStringLiteral("car"), carJson(booked.car));
    out.insert(QStringLiteral("rider_token"), QString::fromLatin1(pending->riderToken));
    if (price.quote)
        out.insert(QStringLiteral("quote"), fareJson(price.quote->fare, price.quote->tariff));
    ApiResponse response = jsonResponse(out, 201);
    const uint64_t id = booked.booking.id;
    response.headers.append({QByteArrayLiteral("Location"), "/api/v1/bookings/" + QByteArray::number(qulonglong(id))});
    if (!m_ledger) {
        if (pending->place)
            pending->place->fill(id);
        return response;
    }
    BookingRecord record = bookingRecord(booked.booking, price.kept);
    record.keyed = pending->keyed;
    // Not acknowledged before it is durable; if it cannot be, the car is freed again. In a
    // cluster the commit is also the claim of the car: when another node claimed it first, this
    // booking is dropped and the next car tried. Each try takes one car off this node's
    // candidates, so the tries end: booked, or no car left (409). An id that holds another
    // booking is refused too (never written over it): tried again under a fresh id, a few times.
    const int carId = booked.booking.carId;
    m_ledger->append(std::move(record), [this, reply, pending, response = std::move(response), id, carId,
                                         idTries](bool committed, const QString &error) {
        if (committed) {
            m_fleet.announce(id);
            if (pending->place)
                pending->place->fill(id);
            (*reply)(response);
            return;
        }
        m_fleet.withdraw(id);
        // The same keyed POST sent twice at once: the other one's booking is this rider's answer.
        if (error.startsWith(QLatin1String(kLedgerBookingKeyTaken))) {
            answerWithKeyedBooking(reply, pending,
                                   errorResponse(503, "ledger_unavailable",
                                                 QStringLiteral("the booking this Idempotency-Key made could not be "
                                                                "read; try again")));
            return;
        }
        int idTriesLeft = idTries;
        int refusedCarId = 0;
        if (error.startsWith(QLatin1String(kLedgerBookingIdTaken))) {
            m_fleet.bookingIdTaken();
            if (--idTriesLeft <= 0) {
                (*reply)(errorResponse(503, "booking_id_taken",
                                       QStringLiteral("the booking could not be recorded: %1; try again").arg(error)));
                return;
            }
        } else if (error.startsWith(QLatin1String(kLedgerCarTaken))) {
            m_fleet.carTakenElsewhere(carId);
            refusedCarId = carId;
        } else {
            (*reply)(errorResponse(503, "ledger_unavailable",
                                   QStringLiteral("the booking could not be recorded durably: %1")
                                       .arg(ledgerFailureReason(error, m_ledger->location()))));
            return;
        }
        try {
            const ApiResponse again = placeBooking(reply, pending, idTriesLeft, refusedCarId);
            if (again.status != ApiResponse::kDeferred)
                (*reply)(again);
        } catch (const ApiException &refused) {
            (*reply)(refused.response);
        }
    });
    return deferredResponse();
}

std::optional<ApiResponse> TaxiApi::replayKeyedBooking(const BookingOrder &order, const QByteArray &riderToken) const
{
    const auto stored =
        m_lookups.readLedger([this, hash = tokenHash(riderToken)] { return m_ledger->reader().bookingByKey(hash); });
    if (!stored)
        return std::nullopt;
    const BookingRecord &made = stored->booking;
    const auto samePoint = [](LatLng p, const LedgerPoint &q) { return p.lat == q.lat && p.lng == q.lng; };
    const bool sameOrder = made.riderId == order.riderId && samePoint(order.pickup, made.pickup)
                           && order.dropoff.has_value() == made.dropoff.has_value()
                           && (!order.dropoff || samePoint(*order.dropoff, *made.dropoff));
    if (!sameOrder)
        throwApiError(409, "idempotency_key_reused",
                      QStringLiteral("this Idempotency-Key made booking %1 for another rider, pickup or drop-off; "
                                     "use a new key for a new booking")
                          .arg(made.bookingId));
    // The booking as it is now (it may have moved on, or ended), with the token the key gives.
    const auto open = openBookingAnywhere(made.bookingId);
    QJsonObject out = open ? bookingView(m_fleet, m_estimator, *open) : storedBookingView(*stored);
    out.insert(QStringLiteral("rider_token"), QString::fromLatin1(riderToken));
    if (const BookingPrice kept = bookingPriceOf(made); kept.hasQuote)
        out.insert(QStringLiteral("quote"), fareJson(kept.quote, PricingBoard(m_fleet.pricing()).tariff()));
    ApiResponse response = jsonResponse(out, 201);
    response.headers.append(
        {QByteArrayLiteral("Location"), "/api/v1/bookings/" + QByteArray::number(qulonglong(made.bookingId))});
    response.headers.append({QByteArrayLiteral("Idempotent-Replayed"), QByteArrayLiteral("true")});
    return response;
}

void TaxiApi::answerWithKeyedBooking(const std::shared_ptr<const DeferredReply> &reply,
                                     const std::shared_ptr<const PendingBooking> &pending, ApiResponse ifNone) const
{
    ApiRequest again;
    again.reply = reply;
    try {
        const ApiResponse answer = m_lookups.defer(again, [this, pending, ifNone = std::move(ifNone)] {
            // Taken before the ledger is read: a claim this copy heard of either shows here, or its
            // booking committed (and was announced) before, so the read below finds it.
            const std::vector<int> heldElsewhere = carsHeldForOtherNodes(m_fleet);
            if (auto replay = replayKeyedBooking(pending->order, pending->riderToken))
                return *replay;
            // Not recorded yet, but booked: its first try waits for the ledger. Told to send the
            // key again (not 409 no_car_available, after which a client would take a new key).
            if (m_fleet.holdsOpenBookingWithToken(tokenHash(pending->riderToken)))
                return keyInProgressResponse();
            if (heldElsewhere.empty())
                return ifNone;
            // In a cluster the same key may be booking on another node: the car it claimed is one
            // of those held, and its commit (not readable before) gives the car its booking here.
            // Waited for, so the rider gets that booking. "No car" only when every held car got its
            // booking and the key's is not among them; else (a car let go unbooked: its booking may
            // be trying the next car; still held after kOtherNodesCommitWaitMs) in progress.
            const HeldCarsEnd end = waitForTheirBookings(m_fleet, heldElsewhere, kOtherNodesCommitWaitMs);
            if (auto replay = replayKeyedBooking(pending->order, pending->riderToken))
                return *replay;
            return end == HeldCarsEnd::Booked ? ifNone : keyInProgressResponse();
        });
        if (answer.status != ApiResponse::kDeferred)
            (*reply)(answer);
    } catch (const ApiException &refused) {
        (*reply)(refused.response);
    }
}

bool TaxiApi::needsLedgerLookup(uint64_t id) const
{
    return m_ledger && !LedgerLookups::inLookup() && !m_fleet.booking(id);
}

std::optional<StoredBooking> TaxiApi::storedBooking(uint64_t id) const
{
    return m_lookups.readLedger([this, id] { return m_ledger->reader().booking(id); });
}

ApiResponse TaxiApi::getBooking(const ApiRequest &request) const
{
    const auto id = riderBookingId(request);
    if (const auto booking = m_fleet.booking(id)) {
        requireBookingOwner(request, *booking);
        return jsonResponse(bookingView(m_fleet, m_estimator, *booking));
    }
    // Not in the fleet: it ended before a restart (or long ago); the ledger still has it.
    if (m_ledger) {
        if (!LedgerLookups::inLookup())
            return m_lookups.defer(request, [this, request] { return getBooking(request); });
        if (const auto stored = storedBooking(id)) {
            requireBookingOwner(request, id, stored->booking.riderTokenHash);
            return jsonResponse(storedBookingView(*stored));
        }
    }
    throwApiError(404, "booking_not_found", QStringLiteral("there is no booking %1").arg(id));
}

std::optional<BookingSnapshot> TaxiApi::openBookingAnywhere(uint64_t id, std::optional<StoredBooking> *ended) const
{
    if (auto booking = m_fleet.booking(id))
        return booking;
    if (!m_ledger)
        return std::nullopt;
    // Booked through another node of a cluster, whose announcement has not reached this node's
    // copy (the rider is faster than the feed, or Redis is away): the ledger has it, and the copy
    // takes it in as a restart would.
    const auto stored = storedBooking(id);
    if (!stored)
        return std::nullopt;
    const BookingSnapshot booking = bookingSnapshotOf(stored->booking);
    if (!isOpen(booking.state)) {
        if (ended)
            *ended = stored;
        return std::nullopt;
    }
    if (!m_fleet.restoreBooking(booking))
        return std::nullopt;
    PricingBoard(m_fleet.pricing()).recordBookingPrice(id, bookingPriceOf(stored->booking));
    return m_fleet.booking(id);
}

void TaxiApi::requireOwner(const ApiRequest &request, uint64_t id, const char *action, const char *wants) const
{
    std::optional<StoredBooking> ended;
    const auto booking = openBookingAnywhere(id, &ended);
    if (booking) {
        requireBookingOwner(request, *booking);
        return;
    }
    if (!ended)
        throwApiError(404, "booking_not_found", QStringLiteral("there is no booking %1").arg(id));
    // What GET tells its rider (from the ledger): the booking ended; the move is refused for that.
    requireBookingOwner(request, id, ended->booking.riderTokenHash);
    const QString state = ended->booking.state;
    throwApiError(409, "illegal_transition",
                  QStringLiteral("booking %1 is %2; %3 needs %4")
                      .arg(id)
                      .arg(state, QLatin1StringView(action), QLatin1StringView(wants)),
                  {{QStringLiteral("state"), state}});
}

ApiResponse TaxiApi::transitionResponse(const BookingTransitionView &view, const char *action) const
{
    using R = FleetStore::TransitionResult;
    if (view.transition.result == R::NotFound)
        throwApiError(404, "booking_not_found", QStringLiteral("there is no booking %1").arg(view.id));
    const QString state = QString(bookingStateName(view.transition.booking.state));
    if (view.transition.result == R::MoveInProgress)
        throwApiError(409, "move_in_progress",
                      QStringLiteral("booking %1 is %2 and another move of it awaits the ledger; try again")
                          .arg(view.id)
                          .arg(state),
                      {{QStringLiteral("state"), state}});
    if (view.transition.result == R::IllegalState)
        throwApiError(409, "illegal_transition",
                      QStringLiteral("booking %1 is %2; %3 needs %4")
                          .arg(view.id)
                          .arg(state, QLatin1StringView(action), QLatin1StringView(view.wants)),
                      {{QStringLiteral("state"), state}});
    return jsonResponse(bookingJson(view.transition.booking));
}

ApiResponse TaxiApi::pickup(const ApiRequest &request)
{
    const auto id = riderBookingId(request);
    if (needsLedgerLookup(id))
        return m_lookups.defer(request, [this, request] { return pickup(request); });
    const char *wants = "arriving (the car must have arrived)";
    requireOwner(request, id, "pickup", wants);
    const BookingTransitionView moved{m_fleet.beginPickup(id), id, wants};
    ApiResponse response = transitionResponse(moved, "pickup");
    return settleAfterCommit(request, transitionRecord(moved.transition.booking), std::move(response), moved);
}

ApiResponse TaxiApi::cancel(const ApiRequest &request)
{
    const auto id = riderBookingId(request);
    if (needsLedgerLookup(id))
        return m_lookups.defer(request, [this, request] { return cancel(request); });
    const char *wants = "assigned or arriving";
    requireOwner(request, id, "cancel", wants);
    const BookingTransitionView moved{m_fleet.beginCancel(id), id, wants};
    ApiResponse response = transitionResponse(moved, "cancel");
    return settleAfterCommit(request, transitionRecord(moved.transition.booking), std::move(response), moved);
}

ApiResponse TaxiApi::complete(const ApiRequest &request)
{
    const auto id = riderBookingId(request);
    if (needsLedgerLookup(id))
        return m_lookups.defer(request, [this, request] { return complete(request); });
    requireOwner(request, id, "complete", "on_trip");
    const CompletedRide completed = beginCompleteRide(m_fleet, id);
    const auto &transition = completed.transition;
    const BookingTransitionView moved{transition, id, "on_trip"};
    transitionResponse(moved, "complete"); // throws 404/409
    QJsonObject out = bookingJson(transition.booking);
    const BookingSnapshot &b = transition.booking;
    out.insert(QStringLiteral("distance_m"), std::round(b.distanceM));
    out.insert(QStringLiteral("duration_s"), std::round(b.durationS));
    out.insert(QStringLiteral("fare"), fareJson(completed.fare, completed.tariff));
    return settleAfterCommit(request, tripRecord(b, completed.fare, completed.tariff), jsonResponse(out), moved);
}

ApiResponse TaxiApi::quote(const ApiRequest &request) const
{
    const LatLng from = queryPoint(request, "from_");
    const LatLng to = queryPoint(request, "to_");
    const QuotedTrip quoted = quoteTrip(PricingBoard(m_fleet.pricing()), m_estimator, from, to);
    return jsonResponse({
        {QStringLiteral("distance_m"), std::round(quoted.trip.distanceM)},
        {QStringLiteral("duration_s"), std::round(quoted.trip.durationS)},
        {QStringLiteral("fare"), fareJson(quoted.fare, quoted.tariff)},
        {QStringLiteral("currency"), quoted.tariff.currency},
        {QStringLiteral("surge"), quoted.fare.surge},
    });
}

} // namespace taxicore
