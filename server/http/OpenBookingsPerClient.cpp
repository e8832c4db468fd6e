#include "http/OpenBookingsPerClient.h"

#include "fleet/BookingState.h"
#include "fleet/FleetStore.h"
#include "http/ClientBuckets.h"
#include "region/Clock.h"
#include "region/SlotLock.h"

#include <algorithm>

namespace taxicore {

OpenBookingsPerClient::Place::Place(AccessBlock &block, const Q_IPV6ADDR &client, int index, int64_t heldUntilMs)
    : m_block(block)
    , m_client(client)
    , m_index(index)
    , m_heldUntilMs(heldUntilMs)
{
}

OpenBookingsPerClient::Place::~Place()
{
    if (!m_filled)
        set(0);
}

void OpenBookingsPerClient::Place::fill(uint64_t bookingId)
{
    set(bookingId);
    m_filled = true;
}

// Only while the place is still this one's: held by it, and the client's bucket not taken over.
void OpenBookingsPerClient::Place::set(uint64_t value)
{
    if (m_index < 0)
        return;
    SlotLock lock(m_block.bucketsLock);
    RateBucket *bucket = findClientBucket(m_block, m_client);
    if (bucket && bucket->openBookings[m_index] == kBookingBeingMade && bucket->heldUntilMs[m_index] == m_heldUntilMs)
        bucket->openBookings[m_index] = value;
}

OpenBookingsPerClient::OpenBookingsPerClient(AccessBlock &block, const FleetStore &fleet)
    : m_block(block)
    , m_fleet(fleet)
{
}

std::shared_ptr<OpenBookingsPerClient::Place> OpenBookingsPerClient::hold(const QHostAddress &client) const
{
    const int64_t now = clock::monotonicMs();
    const Q_IPV6ADDR key = clientKey(client);
    const int places = std::min(limit(), kMaxOpenBookingsPerClient);
    if (places <= 0)
        return std::make_shared<Place>(m_block, key, -1, 0);
    SlotLock lock(m_block.bucketsLock);
    RateBucket &bucket = clientBucket(m_block, key, now, std::max(1.0, m_block.bookingBurst));
    int free = -1;
    for (int i = 0; i < places; ++i) {
        const uint64_t id = bucket.openBookings[i];
        const bool stillHeld = id == kBookingBeingMade && bucket.heldUntilMs[i] > now;
        const bool stillOpen = id != 0 && id != kBookingBeingMade && [&] {
            const auto booking = m_fleet.booking(id);
            return booking && isOpen(booking->state);
        }();
        if (!stillHeld && !stillOpen && free < 0)
            free = i;
    }
    if (free < 0)
        return nullptr;
    // Distinct from every earlier hold of this place, so a late release of one cannot free another.
    const int64_t heldUntil = std::max(now + kHoldMs, bucket.heldUntilMs[free] + 1);
    bucket.openBookings[free] = kBookingBeingMade;
    bucket.heldUntilMs[free] = heldUntil;
    return std::make_shared<Place>(m_block, key, free, heldUntil);
}

} // namespace taxicore
