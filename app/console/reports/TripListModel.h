#pragma once

#include "ledger/LedgerRecords.h"

#include <QAbstractListModel>
#include <qqmlregistration.h>
#include <vector>

// The report's completed trips for the table, newest first, at most kMaxRows (the CSV export
// writes all of them; a table of a busy week would only be scrolled, not read).
class TripListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("made by TripReport")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

public:
    enum Roles {
        BookingIdRole = Qt::UserRole,
        CarIdRole,
        RiderRole,
        StartedMsRole,
        EndedMsRole,
        EndedTextRole, // local time, "yyyy-MM-dd HH:mm"
        DistanceKmRole,
        DurationMinRole,
        FareRole,
        CurrencyRole,
    };
    Q_ENUM(Roles)

    static constexpr int kMaxRows = 5000;

    explicit TripListModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    // Trips in the ledger's order (oldest first); the model shows the newest kMaxRows first.
    void setTrips(const std::vector<taxicore::TripRecord> &trips);

Q_SIGNALS:
    void countChanged();

private:
    std::vector<taxicore::TripRecord> m_rows; // newest first
};
