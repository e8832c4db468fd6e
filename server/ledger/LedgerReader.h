#pragma once

#include "ledger/LedgerOptions.h"
#include "ledger/LedgerRecords.h"
#include "ledger/LedgerReport.h"
#include "ledger/LedgerResult.h"

#include <vector>

namespace taxicore {

// Queries on the ledger file. Each call opens a short-lived connection in the calling thread, so
// any thread (or a process without a Ledger, like the console) can read; in WAL mode a reader
// sees the last committed state and never blocks the writers.
class LedgerReader {
public:
    explicit LedgerReader(const LedgerOptions &options);

    // Bookings whose latest state is open (requested, assigned, arriving, on_trip), oldest first;
    // atMs is the time of that latest state. What a restarted server restores into the fleet.
    LedgerResult<std::vector<BookingRecord>> openBookings() const;
    // Trips that ended in [fromMs, toMs), by end time.
    LedgerResult<std::vector<TripRecord>> trips(qint64 fromMs, qint64 toMs) const;
    LedgerResult<LedgerReport> report(qint64 fromMs, qint64 toMs,
                                      const QTimeZone &zone = QTimeZone::utc()) const;
    LedgerResult<std::vector<EventRecord>> events(qint64 fromMs, qint64 toMs) const;
    // Booking `id` as the ledger has it (none: never recorded), with its trip when completed.
    LedgerResult<std::optional<StoredBooking>> booking(quint64 id) const;
    // The largest booking id ever recorded (0: none): seed the fleet's id counter above it.
    LedgerResult<quint64> maxBookingId() const;

private:
    LedgerOptions m_options;
};

} // namespace taxicore
