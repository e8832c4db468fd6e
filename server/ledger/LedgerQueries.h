#pragma once

#include "ledger/LedgerRecords.h"
#include "ledger/LedgerReport.h"
#include "ledger/LedgerResult.h"

#include <QTimeZone>
#include <optional>
#include <vector>

namespace taxicore {

// What the service reads back from its ledger, whatever backend holds it (Ledger::reader()).
// LedgerReader answers from the SQLite file; a database backend answers the same questions.
class LedgerQueries {
public:
    virtual ~LedgerQueries() = default;

    // Bookings whose latest state is open (requested, assigned, arriving, on_trip), oldest first;
    // atMs is the time of that latest state. What a restarted server restores into the fleet.
    virtual LedgerResult<std::vector<BookingRecord>> openBookings() const = 0;
    // The first `limit` trips that ended in [fromMs, toMs), by end time.
    virtual LedgerResult<std::vector<TripRecord>> trips(qint64 fromMs, qint64 toMs, int limit) const = 0;
    // The report of every trip in the span, summed as the rows are read (no list of them is kept:
    // a day of a busy city is millions of trips).
    virtual LedgerResult<LedgerReport> report(qint64 fromMs, qint64 toMs,
                                              const QTimeZone &zone = QTimeZone::utc()) const = 0;
    virtual LedgerResult<std::vector<EventRecord>> events(qint64 fromMs, qint64 toMs) const = 0;
    // Booking `id` as the ledger has it (none: never recorded), with its trip when completed.
    virtual LedgerResult<std::optional<StoredBooking>> booking(quint64 id) const = 0;
    // The booking an Idempotency-Key made, by the hash of the rider token derived from it (none:
    // no booking was recorded under that key).
    virtual LedgerResult<std::optional<StoredBooking>> bookingByKey(const QByteArray &tokenHash) const = 0;
    // The largest booking id ever recorded (0: none): seed the fleet's id counter above it.
    virtual LedgerResult<quint64> maxBookingId() const = 0;
};

} // namespace taxicore
