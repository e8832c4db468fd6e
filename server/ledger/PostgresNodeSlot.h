#pragma once

#include "ledger/PostgresConnection.h"

#include <atomic>

namespace taxicore {

// A node's slot in the cluster, 1..kPostgresNodeSlots: a session-level advisory lock held on a
// connection of its own for the ledger's lifetime. Booking ids of slot s are [s<<40, (s+1)<<40),
// so the fleet's counter, seeded from the largest id in that range, hands out ids no other node
// can. Taken by the first node to lock it; a node that restarts takes the first free one.
class PostgresNodeSlot {
public:
    static constexpr int kPostgresNodeSlots = 1023;
    static constexpr int kIdBits = 40;

    explicit PostgresNodeSlot(PostgresConnection::Settings settings);

    // Locks the first free slot; an error when none is free or the database is unreachable.
    QString take();
    // After the ledger reconnected (the database restarted: session locks are gone): takes the
    // same slot again, and says so loudly on stderr when another node holds it now.
    void reassert();
    int slot() const { return m_slot.load(std::memory_order_acquire); }

private:
    QString tryLock(int slot, bool *locked);

    PostgresConnection m_connection;
    std::atomic<int> m_slot{0};
};

} // namespace taxicore
