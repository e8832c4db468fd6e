#pragma once

#include <QString>

namespace taxicore {

// A ledger's failure reads "ledger <where>: <reason>", where is Ledger::location() (the file's
// path, or the database's address): whole in the server's log and to operators. Riders are told
// the reason only: where the operator keeps the data is nobody's business outside. Without the
// prefix, the error as it is.
inline QString ledgerFailureReason(const QString &error, const QString &where)
{
    const QString file = QStringLiteral("ledger %1: ").arg(where);
    if (error.startsWith(file))
        return error.mid(file.size());
    // PostgreSQL's messages name host:port/database, which holds no ": ".
    const QLatin1StringView database("ledger PostgreSQL ");
    const qsizetype end = error.startsWith(database) ? error.indexOf(QLatin1StringView(": "), database.size()) : -1;
    const QString reason = end < 0 ? error : error.mid(end + 2);
    // A lost connection names the database's address, and libpq's words about it name the host and
    // port again ("connection to server at ..."): riders learn only that it is unavailable.
    if (reason.startsWith(QLatin1StringView("PostgreSQL at ")))
        return QStringLiteral("the database is unavailable");
    return reason;
}

// How a database ledger refuses a record that lost a compare-and-swap to another node: the error
// passed to append()'s `done(false, error)` starts with one of these, then says why in words
// ("car_taken: car 17 is booked by booking 123"). Nothing of a refused record is written; a
// caller can act on it (a booking tries the next car) instead of answering 503.
inline constexpr auto kLedgerCarTaken = "car_taken";         // the booking's car is claimed by another booking
inline constexpr auto kLedgerBookingMoved = "booking_moved"; // the booking already ended (another node moved it)
// The booking's id holds another booking (an id handed out twice): the caller takes a fresh id.
inline constexpr auto kLedgerBookingIdTaken = "booking_id_taken";
// The booking's Idempotency-Key already made another booking (the same POST sent twice at once):
// the caller drops this one and answers with that booking.
inline constexpr auto kLedgerBookingKeyTaken = "booking_key_taken";
// A reassign names a booking the ledger has no record of (its booking's commit never landed):
// nothing to move, and no car may be claimed for it.
inline constexpr auto kLedgerBookingUnknown = "booking_unknown";

// True when `error` is one of the refusals above: a verdict on that record (nothing of it was
// written), not a failing ledger.
inline bool isLedgerRefusal(const QString &error)
{
    for (const char *refusal :
         {kLedgerCarTaken, kLedgerBookingMoved, kLedgerBookingIdTaken, kLedgerBookingKeyTaken, kLedgerBookingUnknown})
        if (error.startsWith(QLatin1StringView(refusal)) && error.mid(qsizetype(qstrlen(refusal))).startsWith(u':'))
            return true;
    return false;
}

} // namespace taxicore
