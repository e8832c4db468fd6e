#pragma once

#include "ledger/LedgerOptions.h"
#include "ledger/LedgerQueries.h"

#include <vector>

namespace taxicore {

// Queries on the ledger file. Each call opens a short-lived connection in the calling thread, so
// any thread (or a process without a Ledger, like the console) can read; in WAL mode a reader
// sees the last committed state and never blocks the writers.
class LedgerReader final : public LedgerQueries {
public:
    explicit LedgerReader(const LedgerOptions &options);

    LedgerResult<std::vector<BookingRecord>> openBookings() const override;
    LedgerResult<std::vector<TripRecord>> trips(qint64 fromMs, qint64 toMs, int limit) const override;
    LedgerResult<LedgerReport> report(qint64 fromMs, qint64 toMs,
                                      const QTimeZone &zone = QTimeZone::utc()) const override;
    LedgerResult<std::vector<EventRecord>> events(qint64 fromMs, qint64 toMs) const override;
    LedgerResult<std::optional<StoredBooking>> booking(quint64 id) const override;
    LedgerResult<std::optional<StoredBooking>> bookingByKey(const QByteArray &tokenHash) const override;
    LedgerResult<quint64> maxBookingId() const override;

private:
    // The booking row `sql` selects by `key` (an id or a key's token hash), with its trip.
    LedgerResult<std::optional<StoredBooking>> storedBooking(const QString &sql, const QVariant &key) const;

    LedgerOptions m_options;
};

} // namespace taxicore
