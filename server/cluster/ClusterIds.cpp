#include "cluster/ClusterIds.h"

namespace taxicore {

namespace {

// Several nodes start at once: creating the sequence is serialised on this lock's key. A new
// sequence starts above every booking the ledger already has (a database a single node used first).
constexpr const char *kCreateSequence =
    "BEGIN; SELECT pg_advisory_xact_lock(7401701);"
    " DO $$ BEGIN"
    "  IF to_regclass('taxicore_booking_ids') IS NULL THEN"
    "   CREATE SEQUENCE taxicore_booking_ids INCREMENT BY 32;"
    "   IF to_regclass('bookings') IS NOT NULL THEN"
    "    PERFORM setval('taxicore_booking_ids', (SELECT COALESCE(max(id), 0) + 1 FROM bookings), false);"
    "   END IF;"
    "  END IF;"
    " END $$;"
    " COMMIT;";
static_assert(ClusterIds::kBlock == 32, "the sequence's INCREMENT BY is the block size");

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
    if (!m_sequenceReady && !m_session.execute(kCreateSequence))
        return 0;
    m_sequenceReady = true;
    const char *take = "SELECT nextval('taxicore_booking_ids')";
    const auto deadline = PostgresSession::Clock::now() + std::chrono::milliseconds(m_session.timeoutMs());
    const bool wasConnected = m_session.isConnected();
    auto first = m_session.queryValue(take, deadline);
    // The connection may have been idle since the last block and ended by the server (a restart):
    // once more on a fresh one, within the same deadline. nextval is not transactional, so a retry
    // can skip ids but never hand one out twice.
    if (!first && wasConnected)
        first = m_session.queryValue(take, deadline);
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

QString ClusterIds::lastError() const
{
    std::lock_guard lock(m_mutex);
    return m_session.lastError();
}

} // namespace taxicore
