#include "OpsAlertModel.h"

#include <algorithm>

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
    return {{KindRole, "kind"},
            {TextRole, "alertText"},
            {BookingIdRole, "bookingId"},
            {CarIdRole, "carId"},
            {WorkerIndexRole, "workerIndex"},
            {HasPositionRole, "hasPosition"},
            {LatRole, "lat"},
            {LngRole, "lng"}};
}

namespace {
// The same item (the row keeps its delegate; only its text may have changed).
bool sameItem(const ops::Alert &a, const ops::Alert &b)
{
    return a.kind == b.kind && a.bookingId == b.bookingId && a.carId == b.carId && a.workerIndex == b.workerIndex;
}
} // namespace

void OpsAlertModel::setAlerts(std::vector<ops::Alert> alerts)
{
    // Usually the same alerts as a second ago with new durations: changed in place, so a row
    // under the pointer keeps its hover and a click in progress is not lost to a reset.
    const bool sameItems =
        alerts.size() == m_alerts.size() && std::equal(alerts.begin(), alerts.end(), m_alerts.begin(), sameItem);
    if (sameItems) {
        for (size_t row = 0; row < alerts.size(); ++row) {
            const bool changed = alerts[row].text != m_alerts[row].text
                                 || alerts[row].position.lat != m_alerts[row].position.lat
                                 || alerts[row].position.lng != m_alerts[row].position.lng;
            m_alerts[row] = std::move(alerts[row]);
            if (changed)
                Q_EMIT dataChanged(index(int(row)), index(int(row)));
        }
        return;
    }
    const bool countChanges = alerts.size() != m_alerts.size();
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
