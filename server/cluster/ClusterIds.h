#pragma once

#include "cluster/PostgresSession.h"

#include <cstdint>
#include <mutex>

namespace taxicore {

// Booking ids unique across the cluster's nodes, from one PostgreSQL sequence: each process takes
// a block of kBlock ids at a time (one round trip per block), so ids stay nearly dense — a node's
// copy of the fleet keeps bookings in a ring indexed by id, as the embedded fleet does.
class ClusterIds {
public:
    static constexpr int kBlock = 32;

    explicit ClusterIds(const QString &postgresUrl, int timeoutMs = 2000);

    // The next id; 0 when the database cannot be reached (the booking is refused, 503).
    uint64_t next();
    QString lastError() const;

private:
    mutable std::mutex m_mutex;
    PostgresSession m_session;
    bool m_sequenceReady = false;
    uint64_t m_next = 0;
    uint64_t m_end = 0;
};

} // namespace taxicore
