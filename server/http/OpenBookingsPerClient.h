#pragma once

#include "region/RegionLayout.h"

#include <QHostAddress>
#include <memory>

namespace taxicore {

class FleetStore;

// At most --open-bookings-per-client (10; AccessBlock::openBookingsPerClient, 0: no limit)
// bookings open at once per client address. The rate limit alone
// let one address keep ~620 bookings waiting (a burst of 20, then 60 a minute, each open for the
// 600 s pickup timeout): more than the 500 cars, so one client could hold the whole fleet. The
// places are kept with the client's rate bucket in the region (ClientBuckets), so every process of
// a machine counts the same ones; a cluster's nodes count each their own. A place is freed when
// its booking is no longer open (looked up when the client asks for another), so no path that
// ends a booking needs to know of this. A client evicted from the table (every bucket near its
// home in use by others) starts afresh, as its rate tokens do.
class OpenBookingsPerClient {
public:
    // A place held for a booking being made: given the booking's id once it is answered 201
    // (fill), or freed when it is destroyed unfilled (the booking failed). A held place not
    // filled within kHoldMs (its process died) is free again. Index -1: no place kept (no limit).
    class Place {
    public:
        Place(AccessBlock &block, const Q_IPV6ADDR &client, int index, int64_t heldUntilMs);
        ~Place();
        Place(const Place &) = delete;
        Place &operator=(const Place &) = delete;
        void fill(uint64_t bookingId);

    private:
        void set(uint64_t value);

        AccessBlock &m_block;
        Q_IPV6ADDR m_client;
        int m_index;
        int64_t m_heldUntilMs;
        bool m_filled = false;
    };

    static constexpr int64_t kHoldMs = 60'000;

    OpenBookingsPerClient(AccessBlock &block, const FleetStore &fleet);
    // A place for one more open booking of `client` (one that keeps nothing when there is no
    // limit); null when all its places hold open bookings.
    std::shared_ptr<Place> hold(const QHostAddress &client) const;
    int limit() const { return int(m_block.openBookingsPerClient); }

private:
    AccessBlock &m_block;
    const FleetStore &m_fleet;
};

} // namespace taxicore
