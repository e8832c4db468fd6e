#include "OpsAlertModel.h"

OpsAlertModel::OpsAlertModel(QObject *parent)
    : QAbstractListModel(parent)
{
}

int OpsAlertModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_alerts.size());
}

QVariant OpsAlertModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const ops::Alert &a = m_alerts[size_t(index.row())];
    switch (role) {
    case KindRole:
        return kindName(a.kind);
    case Qt::DisplayRole:
    case TextRole:
        return a.text;
    case BookingIdRole:
        return a.bookingId;
    case CarIdRole:
        return a.carId;
    case WorkerIndexRole:
        return a.workerIndex;
    case HasPositionRole:
        return a.hasPosition;
    case LatRole:
        return a.position.lat;
    case LngRole:
        return a.position.lng;
    }
    return {};
}

QHash<int, QByteArray> OpsAlertModel::roleNames() const
{
    return {{KindRole, "kind"},         {TextRole, "alertText"},
            {BookingIdRole, "bookingId"}, {CarIdRole, "carId"},
            {WorkerIndexRole, "workerIndex"}, {HasPositionRole, "hasPosition"},
            {LatRole, "lat"},           {LngRole, "lng"}};
}

void OpsAlertModel::setAlerts(std::vector<ops::Alert> alerts)
{
    const bool countChanges = alerts.size() != m_alerts.size();
    // A few dozen rows once a second: a reset is simpler than a diff and cheap here.
    beginResetModel();
    m_alerts = std::move(alerts);
    endResetModel();
    if (countChanges)
        Q_EMIT countChanged();
}

QString OpsAlertModel::kindName(ops::Alert::Kind kind)
{
    switch (kind) {
    case ops::Alert::Kind::Breaker:
        return QStringLiteral("breaker");
    case ops::Alert::Kind::Worker:
        return QStringLiteral("worker");
    case ops::Alert::Kind::WaitingBooking:
        return QStringLiteral("waiting_booking");
    case ops::Alert::Kind::StaleCar:
        return QStringLiteral("stale_car");
    }
    return {};
}
