#pragma once

#include "ledger/LedgerRecords.h"

#include <QSqlQuery>

namespace taxicore {

class LedgerConnection;

// Writes records through statements prepared once on the writer's connection; the caller holds
// the transaction. Booking rows only move forward along the state machine (by rank), so
// transitions committed out of order by different processes still leave the latest state.
class LedgerRecordWriter {
public:
    explicit LedgerRecordWriter(LedgerConnection &connection);

    QString prepare();
    // An error message (and nothing of the record written by the failing statement), or empty.
    QString write(const LedgerRecord &record);

private:
    QString writeBooking(const BookingRecord &booking);
    // kLedgerBookingIdTaken when the booking's id holds another booking (its own created_ms,
    // rider_id or rider_token_hash; a row only a move made is none), else empty.
    QString refuseAnotherBooking(const BookingRecord &booking);
    // Records that the booking's Idempotency-Key made it; kLedgerBookingKeyTaken when the key made
    // another booking.
    QString claimKey(quint64 bookingId, const QByteArray &tokenHash);
    QString writeTransition(const TransitionRecord &transition);
    QString writeReassign(const TransitionRecord &transition);
    QString writeTrip(const TripRecord &trip);
    QString writeEvent(const EventRecord &event);
    QString writeProgress(const ProgressRecord &progress);
    QString moveState(quint64 bookingId, const QString &state, int carId, qint64 atMs,
                      const std::optional<LedgerPoint> &dropoff);
    QString run(QSqlQuery &query, const QString &doing);

    LedgerConnection &m_connection;
    QSqlQuery m_booking;
    QSqlQuery m_state;
    QSqlQuery m_transition;
    QSqlQuery m_trip;
    QSqlQuery m_event;
    QSqlQuery m_reassign;
    QSqlQuery m_progress;
    QSqlQuery m_keyOwner;
    QSqlQuery m_claimKey;
    QSqlQuery m_anotherBooking;
    qint64 m_pid = 0;
};

} // namespace taxicore
