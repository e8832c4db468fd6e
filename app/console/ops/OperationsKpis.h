#pragma once

#include "OpsAlertModel.h"
#include "OpsRules.h"

#include <QObject>
#include <QPointer>
#include <QTimer>
#include <qqmlregistration.h>

class ConsoleBackend;

// The operations view's live figures: the top bar's KPIs and the alert list, sampled from the
// fleet's shared memory and the event log once a second (never per car update, so the map keeps
// its frame rate with 10,000 cars).
class OperationsKpis : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(ConsoleBackend *backend READ backend WRITE setBackend NOTIFY backendChanged)
    Q_PROPERTY(int openBookings READ openBookings NOTIFY sampled)
    Q_PROPERTY(int waitingForPickup READ waitingForPickup NOTIFY sampled)
    Q_PROPERTY(int unassigned READ unassigned NOTIFY sampled)
    Q_PROPERTY(double medianPickupS READ medianPickupS NOTIFY sampled)
    Q_PROPERTY(double p90PickupS READ p90PickupS NOTIFY sampled)
    Q_PROPERTY(int pickupSamples READ pickupSamples NOTIFY sampled)
    Q_PROPERTY(double utilisation READ utilisation NOTIFY sampled)
    Q_PROPERTY(double bookingsPerMinute READ bookingsPerMinute NOTIFY sampled)
    Q_PROPERTY(int carsOnDuty READ carsOnDuty NOTIFY sampled)
    Q_PROPERTY(OpsAlertModel *alerts READ alerts CONSTANT)
    // Alerts beyond kMaxAlerts are counted here but not listed.
    Q_PROPERTY(int alertsNotShown READ alertsNotShown NOTIFY sampled)
    Q_PROPERTY(double waitingAlertS READ waitingAlertS WRITE setWaitingAlertS NOTIFY thresholdsChanged)
    Q_PROPERTY(double staleCarS READ staleCarS WRITE setStaleCarS NOTIFY thresholdsChanged)

public:
    static constexpr int kSampleIntervalMs = 1000;
    // The newest bookings read per sample: more than a minute's bookings at the rates measured.
    static constexpr int kBookingsRead = 2000;
    static constexpr int kEventsRead = 64;
    static constexpr int kMaxAlerts = 100;

    explicit OperationsKpis(QObject *parent = nullptr);

    ConsoleBackend *backend() const;
    void setBackend(ConsoleBackend *backend);
    int openBookings() const { return m_kpis.openBookings; }
    int waitingForPickup() const { return m_kpis.waitingForPickup; }
    int unassigned() const { return m_kpis.unassigned; }
    double medianPickupS() const { return m_kpis.medianPickupS; }
    double p90PickupS() const { return m_kpis.p90PickupS; }
    int pickupSamples() const { return m_kpis.pickupSamples; }
    double utilisation() const { return m_kpis.utilisation; }
    double bookingsPerMinute() const { return m_kpis.bookingsPerMinute; }
    int carsOnDuty() const { return m_carsOnDuty; }
    OpsAlertModel *alerts() { return &m_alerts; }
    int alertsNotShown() const { return m_alertsNotShown; }
    double waitingAlertS() const { return m_thresholds.waitingS; }
    void setWaitingAlertS(double seconds);
    double staleCarS() const { return m_thresholds.staleCarS; }
    void setStaleCarS(double seconds);

    Q_INVOKABLE void sample();

Q_SIGNALS:
    void backendChanged();
    void thresholdsChanged();
    void sampled();

private:
    QPointer<ConsoleBackend> m_backend;
    QTimer m_timer;
    ops::Kpis m_kpis;
    ops::AlertThresholds m_thresholds;
    OpsAlertModel m_alerts;
    int m_carsOnDuty = 0;
    int m_alertsNotShown = 0;
};
