#pragma once

#include "OpsRules.h"

#include <QAbstractListModel>
#include <qqmlregistration.h>
#include <vector>

// The operations view's alert list, most urgent first (see ops::sortAlerts); OperationsKpis fills
// it once a second.
class OpsAlertModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("OperationsKpis owns the alert list")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

public:
    enum Roles {
        KindRole = Qt::UserRole, // "breaker", "worker", "waiting_booking", "stale_car"
        TextRole,
        BookingIdRole,
        CarIdRole,
        WorkerIndexRole,
        HasPositionRole,
        LatRole,
        LngRole,
    };
    Q_ENUM(Roles)

    explicit OpsAlertModel(QObject *parent = nullptr);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    void setAlerts(std::vector<ops::Alert> alerts);
    static QString kindName(ops::Alert::Kind kind);

Q_SIGNALS:
    void countChanged();

private:
    std::vector<ops::Alert> m_alerts;
};
