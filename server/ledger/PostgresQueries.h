#pragma once

#include "ledger/LedgerQueries.h"
#include "ledger/PostgresConnection.h"

#include <mutex>

namespace taxicore {

class PostgresNodeSlot;

// LedgerQueries on PostgreSQL: one connection of its own, shared by the calling threads (one
// query at a time), opened on first use and again after it was lost. Every wait is bounded by
// the connect and statement timeouts; an unreachable database is an error naming it.
class PostgresQueries final : public LedgerQueries {
public:
    PostgresQueries(PostgresConnection::Settings settings, const PostgresNodeSlot *slot);

    LedgerResult<std::vector<BookingRecord>> openBookings() const override;
    LedgerResult<std::vector<TripRecord>> trips(qint64 fromMs, qint64 toMs, int limit) const override;
    LedgerResult<LedgerReport> report(qint64 fromMs, qint64 toMs,
                                      const QTimeZone &zone = QTimeZone::utc()) const override;
    LedgerResult<std::vector<EventRecord>> events(qint64 fromMs, qint64 toMs) const override;
    LedgerResult<std::optional<StoredBooking>> booking(quint64 id) const override;
    LedgerResult<std::optional<StoredBooking>> bookingByKey(const QByteArray &tokenHash) const override;
    // With a node slot s: the largest id in [s<<40, (s+1)<<40), or s<<40 when there is none.
    LedgerResult<quint64> maxBookingId() const override;

private:
    // The booking row `sql` selects by `key` (an id or a key's token hash), with its trip.
    LedgerResult<std::optional<StoredBooking>> storedBooking(const QByteArray &sql, const PgParams &key) const;
    PgResult select(const QByteArray &sql, const PgParams &params, QString *error) const;

    mutable std::mutex m_mutex;
    mutable PostgresConnection m_connection;
    const PostgresNodeSlot *m_slot;
};

} // namespace taxicore
