#include "TripListModel.h"

#include <QDateTime>
#include <algorithm>

TripListModel::TripListModel(QObject *parent)
    : QAbstractListModel(parent)
{
}

int TripListModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QVariant TripListModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const taxicore::TripRecord &trip = m_rows[std::size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
    case BookingIdRole:
        return qint64(trip.bookingId);
    case CarIdRole:
        return trip.carId;
    case RiderRole:
        return trip.riderId;
    case StartedMsRole:
        return trip.startedMs;
    case EndedMsRole:
        return trip.endedMs;
    case EndedTextRole:
        return QDateTime::fromMSecsSinceEpoch(trip.endedMs).toString(QStringLiteral("yyyy-MM-dd HH:mm"));
    case DistanceKmRole:
        return trip.distanceM / 1000.0;
    case DurationMinRole:
        return trip.durationS / 60.0;
    case FareRole:
        return trip.fare.total;
    case CurrencyRole:
        return trip.fare.currency;
    default:
        return {};
    }
}

QHash<int, QByteArray> TripListModel::roleNames() const
{
    return {{BookingIdRole, "bookingId"},
            {CarIdRole, "carId"},
            {RiderRole, "rider"},
            {StartedMsRole, "startedMs"},
            {EndedMsRole, "endedMs"},
            {EndedTextRole, "endedText"},
            {DistanceKmRole, "distanceKm"},
            {DurationMinRole, "durationMin"},
            {FareRole, "fare"},
            {CurrencyRole, "currency"}};
}

void TripListModel::setTrips(const std::vector<taxicore::TripRecord> &trips)
{
    const auto shown = std::min<std::size_t>(trips.size(), kMaxRows);
    beginResetModel();
    m_rows.assign(trips.rbegin(), trips.rbegin() + std::ptrdiff_t(shown));
    endResetModel();
    Q_EMIT countChanged();
}
