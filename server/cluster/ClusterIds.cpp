#include "cluster/ClusterIds.h"

namespace taxicore {

namespace {

// Several nodes start at once: creating the sequence is serialised on this lock's key. A new
// sequence starts above every booking the ledger already has (a database a single node used
// first), and `%1` ids further: see kLostSequenceMargin.
constexpr const char *kCreateSequence =
    "BEGIN; SELECT pg_advisory_xact_lock(7401701);"
    " DO $$ BEGIN"
    "  IF to_regclass('taxicore_booking_ids') IS NULL THEN"
    "   CREATE SEQUENCE taxicore_booking_ids INCREMENT BY 32;"
    "   IF to_regclass('bookings') IS NOT NULL THEN"
    "    PERFORM setval('taxicore_booking_ids', (SELECT COALESCE(max(id), 0) + 1 + %1 FROM bookings), false);"
    "   END IF;"
    "  END IF;"
    " END $$;"
    " COMMIT;";
static_assert(ClusterIds::kBlock == 32, "the sequence's INCREMENT BY is the block size");

// A sequence lost while nodes ran (a database restored without it): their blocks from it, and ids
// spent on commits that failed, lie above the ledger's newest booking. A booking created again
// under a taken id would replace the first one (the ledger's create is an upsert, for replays),
// so a sequence made again starts this far above: each process holds one block and spends at
// most one more on failed commits, a margin for 512 processes. Ids are never dense across such a
// gap anyway, and nothing needs them to be.
constexpr uint64_t kLostSequenceMargin = uint64_t(ClusterIds::kBlock) * 1024;

QByteArray createSequence(uint64_t margin)
{
    return QByteArray(kCreateSequence).replace("%1", QByteArray::number(margin));
}

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
    if (!m_sequenceReady && !m_session.execute(createSequence(0).constData()))
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
    // The sequence may be gone (a database restored without it): made again past every id the
    // lost one may have handed out, and asked once more, all within the same deadline.
    if (!first && m_session.execute(createSequence(kLostSequenceMargin).constData(), deadline))
        first = m_session.queryValue(take, deadline);
    if (!first) {
        m_sequenceReady = false; // made sure of again before the next block
        return 0;
    }
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
