#include "HourlyTripsModel.h"

#include <algorithm>

HourlyTripsModel::HourlyTripsModel(QObject *parent)
    : QAbstractListModel(parent)
{
}

int HourlyTripsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_hours.size());
}

QVariant HourlyTripsModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const taxicore::LedgerHourBucket &hour = m_hours[std::size_t(index.row())];
    switch (role) {
    case Qt::DisplayRole:
    case HourRole:
        return index.row();
    case TripsRole:
        return hour.trips;
    case RevenueRole:
        return hour.revenue;
    case AverageFareRole:
        return hour.trips > 0 ? hour.revenue / hour.trips : 0.0;
    default:
        return {};
    }
}

QHash<int, QByteArray> HourlyTripsModel::roleNames() const
{
    return {{HourRole, "hour"}, {TripsRole, "trips"}, {RevenueRole, "revenue"}, {AverageFareRole, "averageFare"}};
}

void HourlyTripsModel::setReport(const taxicore::LedgerReport &report)
{
    m_hours = report.byHour;
    Q_EMIT dataChanged(index(0), index(int(m_hours.size()) - 1));
    Q_EMIT reportChanged();
}

int HourlyTripsModel::busiestTrips() const
{
    int most = 0;
    for (const auto &hour : m_hours)
        most = std::max(most, hour.trips);
    return most;
}

double HourlyTripsModel::busiestRevenue() const
{
    double most = 0;
    for (const auto &hour : m_hours)
        most = std::max(most, hour.revenue);
    return most;
}
