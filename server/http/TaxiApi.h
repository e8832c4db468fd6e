#pragma once

#include "fleet/FleetTypes.h"
#include "http/OpenBookingsPerClient.h"
#include "http/BookingRateLimiter.h"
#include "http/LedgerLookups.h"
#include "wire/HttpTypes.h"
#include "ledger/LedgerRecords.h"
#include "pricing/PricedRide.h"
#include "pricing/Tariff.h"
#include "wire/RequestInput.h"

#include <functional>
#include <memory>

namespace taxicore {

class FleetStore;
class Ledger;
class RouteTable;
class TripEstimator;

// API v1: car positions, nearby search, bookings and their trip, fare quotes. With a ledger, a
// booking and each of its moves is acknowledged only after its record is committed.
class TaxiApi {
public:
    // Tariff and surge come from the shared region (PricingBoard): the same in every process.
    TaxiApi(FleetStore &fleet, const TripEstimator &estimator, Ledger *ledger = nullptr);
    void registerRoutes(RouteTable &router);
    // A cluster node's limiter, shared by the nodes (ApiStack); it must outlive this. Null: the
    // buckets in this machine's region.
    void setBookingLimiter(BookingLimiter *limiter) { m_limiter = limiter ? limiter : &m_rateLimiter; }
    // Where this process's requests wait for the ledger (one read connection, one thread): the
    // reports wait there too (ReportApi).
    LedgerLookups &ledgerLookups() const { return m_lookups; }

private:
    ApiResponse putPosition(const ApiRequest &request);
    ApiResponse nearby(const ApiRequest &request) const;
    ApiResponse createBooking(const ApiRequest &request);
    // A booking order with what is decided once, before any car is tried: the rider's token and price.
    struct PendingBooking {
        BookingOrder order;
        QByteArray riderToken;
        RidePrice price;
        bool keyed = false; // the token derives from an Idempotency-Key (http/IdempotencyKey.h)
        // The client's place for one more open booking; null for an unlimited client (operators,
        // trusted loopback). Filled with the booking's id once it is answered 201.
        std::shared_ptr<OpenBookingsPerClient::Place> place;
    };
    // Books a car and answers once the ledger committed it; `idTries`: how many more times a
    // booking refused for a taken id is tried under a fresh one (kBookingIdTries). `refusedCar`:
    // the car the ledger just refused this booking (another node's booking holds it), 0 on the
    // first try; chosen again, this node cannot see that node's bookings and the booking ends.
    ApiResponse placeBooking(const std::shared_ptr<const DeferredReply> &reply,
                             const std::shared_ptr<const PendingBooking> &pending, int idTries,
                             int refusedCar = 0) const;
    // The booking an Idempotency-Key made, answered again (201, Idempotent-Replayed: true), as the
    // ledger has it, on the lookup thread; none when the key made none. 409 idempotency_key_reused
    // when that booking was made for another order.
    std::optional<ApiResponse> replayKeyedBooking(const BookingOrder &order, const QByteArray &riderToken) const;
    // Answers `reply` with the booking the pending booking's key made (its commit was refused for
    // the key, or it found no car), read on the lookup thread; `ifNone` when the key made none and
    // no request is making it. 409 idempotency_key_in_progress while one may be: a booking of this
    // node with the key waits for its commit, or (a cluster) cars held for other nodes' bookings
    // still were after a short wait for their commits (http/CarsHeldElsewhere.h).
    void answerWithKeyedBooking(const std::shared_ptr<const DeferredReply> &reply,
                                const std::shared_ptr<const PendingBooking> &pending, ApiResponse ifNone) const;
    ApiResponse getBooking(const ApiRequest &request) const;
    ApiResponse pickup(const ApiRequest &request);
    ApiResponse complete(const ApiRequest &request);
    ApiResponse cancel(const ApiRequest &request);
    ApiResponse quote(const ApiRequest &request) const;
    // True when booking `id` is not in this node's fleet and the ledger must be asked: the handler
    // then runs again on the lookup thread (m_lookups), not on the event loop.
    bool needsLedgerLookup(uint64_t id) const;
    // The ledger's record of booking `id` (on the lookup thread); 503 when the ledger cannot say.
    std::optional<StoredBooking> storedBooking(uint64_t id) const;
    // The booking from this node's fleet, or, when only the ledger has it open (made through another
    // node of a cluster moments ago), taken into the fleet from there; none when neither has it open.
    // `ended`, when given, receives the ledger's record of a booking it has but not open here.
    std::optional<BookingSnapshot> openBookingAnywhere(uint64_t id,
                                                       std::optional<StoredBooking> *ended = nullptr) const;
    // 404 without the booking; 401/403 unless the request carries its rider token (or the admin
    // token); 409 illegal_transition naming the state of one that ended before this process held it
    // (before a restart): the move `action`, which needs `wants`, is refused as the fleet would.
    void requireOwner(const ApiRequest &request, uint64_t id, const char *action, const char *wants) const;
    ApiResponse transitionResponse(const struct BookingTransitionView &view, const char *action) const;
    // Answers `response` once `record` is durable (at once without a ledger), 503 when it cannot
    // be; `settled(committed)` runs first, so what the client reads next is what the ledger has.
    ApiResponse afterCommit(const ApiRequest &request, LedgerRecord record, ApiResponse response,
                            std::function<void(bool committed)> settled = {}) const;
    // The same for a begun pickup, complete or cancel: applied by FleetStore::settle on commit.
    ApiResponse settleAfterCommit(const ApiRequest &request, LedgerRecord record, ApiResponse response,
                                  const struct BookingTransitionView &view) const;

    FleetStore &m_fleet;
    const TripEstimator &m_estimator;
    Ledger *m_ledger;
    BookingRateLimiter m_rateLimiter; // POST /api/v1/bookings per client, shared by every process
    BookingLimiter *m_limiter = &m_rateLimiter;
    OpenBookingsPerClient m_openBookings; // --open-bookings-per-client
    // Last: destroyed first, it waits for a running lookup while what that uses still exists.
    mutable LedgerLookups m_lookups;
};

} // namespace taxicore
