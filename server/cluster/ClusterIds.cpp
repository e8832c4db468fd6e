#include "cluster/ClusterIds.h"

#include "region/RegionLayout.h"

namespace taxicore {

namespace {

// Several nodes start at once: creating the sequence is serialised on this lock's key. A new
// sequence starts above every booking the ledger already has (a database a single node used first,
// a dump restored without the sequence) by kReseedMargin: when it was dropped while the cluster
// ran, the other processes still hold the blocks they took from the old one, above the largest
// booking committed so far. An empty ledger starts at 1.
constexpr const char *kCreateSequence =
    "BEGIN; SELECT pg_advisory_xact_lock(7401701);"
    " DO $$ BEGIN"
    "  IF to_regclass('taxicore_booking_ids') IS NULL THEN"
    "   CREATE SEQUENCE taxicore_booking_ids INCREMENT BY 32;"
    "   IF to_regclass('bookings') IS NOT NULL THEN"
    "    PERFORM setval('taxicore_booking_ids',"
    "     (SELECT CASE WHEN max(id) IS NULL THEN 1 ELSE max(id) + 1 + 1048576 END FROM bookings), false);"
    "   END IF;"
    "  END IF;"
    " END $$;"
    " COMMIT;";

// After a taken id: the sequence is behind ids already handed out (made again by an older node
// without the margin, or set back by hand). Moved above every booking by the margin unless it is
// there already. ALTER SEQUENCE holds the sequence's lock until the commit, so no nextval runs
// between reading it and setting it (setting it back below a block just taken).
constexpr const char *kAdvanceSequence =
    "BEGIN; SELECT pg_advisory_xact_lock(7401701);"
    " DO $$ DECLARE target bigint; BEGIN"
    "  IF to_regclass('taxicore_booking_ids') IS NULL OR to_regclass('bookings') IS NULL THEN RETURN; END IF;"
    "  ALTER SEQUENCE taxicore_booking_ids INCREMENT BY 32;"
    "  SELECT COALESCE(max(id), 0) + 1 + 1048576 INTO target FROM bookings;"
    "  IF (SELECT last_value FROM taxicore_booking_ids) < target THEN"
    "   PERFORM setval('taxicore_booking_ids', target, false);"
    "  END IF;"
    " END $$;"
    " COMMIT;";

constexpr const char *kTakeBlock = "SELECT nextval('taxicore_booking_ids')";

static_assert(ClusterIds::kBlock == 32, "the sequence's INCREMENT BY is the block size");
static_assert(ClusterIds::kReseedMargin == 1048576, "the margin in kCreateSequence and kAdvanceSequence");
static_assert(ClusterIds::kReseedMargin % kBookingCapacity == 0, "the ring places ids after a jump as before it");

} // namespace

ClusterIds::ClusterIds(const QString &postgresUrl, int timeoutMs)
    : m_session(postgresUrl, timeoutMs)
{
}

uint64_t ClusterIds::next()
{
    std::lock_guard lock(m_mutex);
    if (m_next < m_end)
        return m_next++;
    const auto deadline = PostgresSession::Clock::now() + std::chrono::milliseconds(m_session.timeoutMs());
    auto first = takeBlock(deadline);
    // The connection may have been idle since the last block and ended by the server (a restart),
    // or the sequence is gone (dropped, a dump restored without it): once more on a fresh
    // connection, making the sequence again, within the same deadline. nextval is not
    // transactional, so a retry can skip ids but never hand one out twice.
    if (!first)
        first = takeBlock(deadline);
    if (!first)
        return 0;
    bool ok = false;
    const uint64_t start = first->toULongLong(&ok);
    if (!ok || start == 0)
        return 0;
    m_next = start;
    m_end = start + kBlock;
    return m_next++;
}

std::optional<QByteArray> ClusterIds::takeBlock(PostgresSession::Clock::time_point deadline)
{
    if (!m_sequenceReady && !m_session.execute(kCreateSequence, deadline))
        return std::nullopt;
    m_sequenceReady = true;
    if (m_advanceSequence && !m_session.execute(kAdvanceSequence, deadline))
        return std::nullopt;
    m_advanceSequence = false;
    auto start = m_session.queryValue(kTakeBlock, deadline);
    if (!start)
        m_sequenceReady = false; // made again (if it is gone) before the next try
    return start;
}

void ClusterIds::skipBlock()
{
    std::lock_guard lock(m_mutex);
    m_next = m_end;
    m_advanceSequence = true;
}

QString ClusterIds::lastError() const
{
    std::lock_guard lock(m_mutex);
    return m_session.lastError();
}

} // namespace taxicore
