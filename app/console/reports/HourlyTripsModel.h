#pragma once

#include "ledger/LedgerReport.h"

#include <QAbstractListModel>
#include <qqmlregistration.h>

// The report's 24 hours of the day (in the console's time zone): trips, revenue and average fare
// per hour, for the by-hour chart. Always 24 rows; a new report changes them in place.
class HourlyTripsModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("made by TripReport")
    Q_PROPERTY(int busiestTrips READ busiestTrips NOTIFY reportChanged)
    Q_PROPERTY(double busiestRevenue READ busiestRevenue NOTIFY reportChanged)

public:
    enum Roles {
        HourRole = Qt::UserRole,
        TripsRole,
        RevenueRole,
        AverageFareRole,
    };
    Q_ENUM(Roles)

    explicit HourlyTripsModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    void setReport(const taxicore::LedgerReport &report);
    // The largest hour's figures: the chart's axis ranges.
    int busiestTrips() const;
    double busiestRevenue() const;

Q_SIGNALS:
    void reportChanged();

private:
    std::array<taxicore::LedgerHourBucket, 24> m_hours{};
};
