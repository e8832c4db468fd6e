#pragma once

#include "cluster/PostgresSession.h"

#include <cstdint>
#include <mutex>
#include <optional>

namespace taxicore {

// Booking ids unique across the cluster's nodes, from one PostgreSQL sequence: each process takes
// a block of kBlock ids at a time (one round trip per block), so ids stay nearly dense — a node's
// copy of the fleet keeps bookings in a ring indexed by id, as the embedded fleet does.
class ClusterIds {
public:
    static constexpr int kBlock = 32;
    // How far above the largest booking a sequence made again (it was dropped, or a dump restored
    // without it) or moved after a taken id starts: above every block a live process may still
    // hold (one each; 2^20 ids are 32,768 blocks), and a multiple of the fleet's booking ring, so
    // the ids after the jump land in the ring as if they had followed on.
    static constexpr uint64_t kReseedMargin = uint64_t(1) << 20;

    explicit ClusterIds(const QString &postgresUrl, int timeoutMs = 2000);

    // The next id; 0 when the database cannot be reached (the booking is refused, 503).
    uint64_t next();
    // The ledger refused a booking because its id holds another booking (handed out twice): the
    // sequence overlaps ids handed out, and so may the rest of this block. It is dropped; the next
    // block is taken after the sequence was moved above every booking by kReseedMargin (unless it
    // is there already).
    void skipBlock();
    QString lastError() const;

private:
    std::optional<QByteArray> takeBlock(PostgresSession::Clock::time_point deadline);

    mutable std::mutex m_mutex;
    PostgresSession m_session;
    bool m_sequenceReady = false;
    bool m_advanceSequence = false;
    uint64_t m_next = 0;
    uint64_t m_end = 0;
};

} // namespace taxicore
