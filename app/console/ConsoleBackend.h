#pragma once

#include "control/RuntimeSettings.h"
#include "runtime/ServerOptions.h"

#include <QElapsedTimer>
#include <QFutureWatcher>
#include <QJsonObject>
#include <QVariantList>
#include <QObject>
#include <QTimer>
#include <QUrl>
#include <QVariantMap>
#include <memory>
#include <qqmlregistration.h>

class QQmlEngine;
class QJSEngine;

namespace taxicore {
class FleetStore;
class Ledger;
class ServerHost;
class TripEstimator;
namespace city {
class City;
}
} // namespace taxicore

// The console's window onto the embedded server: owns the ServerHost and publishes its URL,
// mode and request counters to QML. Polls shared memory; never talks HTTP to its own server.
class ConsoleBackend : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_SINGLETON
    Q_PROPERTY(bool serving READ serving NOTIFY servingChanged)
    Q_PROPERTY(QString errorString READ errorString NOTIFY servingChanged)
    Q_PROPERTY(QUrl url READ url NOTIFY servingChanged)
    // The bearer token of /admin/* (shown in the server bar so an operator can use the API remotely).
    Q_PROPERTY(QString adminToken READ adminToken NOTIFY servingChanged)
    Q_PROPERTY(QString mode READ mode NOTIFY runtimeChanged)
    Q_PROPERTY(int carCount READ carCount NOTIFY servingChanged)
    Q_PROPERTY(qint64 requestsServed READ requestsServed NOTIFY statsChanged)
    Q_PROPERTY(double requestsPerSecond READ requestsPerSecond NOTIFY statsChanged)
    // The execution model now serving (whoever switched it: this console or the admin API).
    Q_PROPERTY(int workers READ workers NOTIFY runtimeChanged)
    Q_PROPERTY(int threads READ threads NOTIFY runtimeChanged)
    Q_PROPERTY(QString policy READ policy NOTIFY runtimeChanged)
    Q_PROPERTY(bool canSwitchMode READ serving NOTIFY servingChanged)
    Q_PROPERTY(bool applying READ applying NOTIFY applyingChanged)
    // Pricing in force (kept across restarts, see settings/ConsoleSettings.h):
    // {currency, base, per_km, per_min, minimum, ...} as in GET /admin/v1/tariff.
    Q_PROPERTY(QVariantMap tariff READ tariff NOTIFY pricingChanged)
    Q_PROPERTY(double demandRate READ demandRate NOTIFY pricingChanged)

public:
    explicit ConsoleBackend(taxicore::ServerOptions options, QObject *parent = nullptr);
    ~ConsoleBackend() override;

    // Starts the embedded server; false leaves errorString() set for the user.
    bool start();
    void stop();

    bool serving() const;
    QString errorString() const { return m_error; }
    QUrl url() const;
    QString adminToken() const;
    // The token car devices send with position reports (taxicore-bench gets it from the console).
    QString deviceToken() const;
    QString mode() const;
    int carCount() const;
    qint64 requestsServed() const { return m_requests; }
    double requestsPerSecond() const { return m_rate; }
    int workers() const { return m_runtime.workers; }
    int threads() const { return m_runtime.threads; }
    QString policy() const { return taxicore::policyName(m_runtime.policy); }
    bool applying() const { return m_applying.isRunning(); }

    // Null until the server serves; read at display rate by the map and the bookings model.
    taxicore::FleetStore *fleet() const;
    // The street network the server routes on; null while not serving or when it failed to load.
    std::shared_ptr<const taxicore::city::City> city() const;
    // The embedded server's ledger (reports, benchmark events); null while not serving.
    taxicore::Ledger *ledger() const;

    // One car for the map's info popup: id, state, speedKmh, bookingId, updatedMs, lat, lng.
    Q_INVOKABLE QVariantMap carInfo(int id) const;
    Q_INVOKABLE bool cancelBooking(qint64 id);
    // Gives an assigned or arriving booking another car (0: the best available by road ETA),
    // recorded in the ledger like POST /admin/v1/bookings/{id}/reassign.
    // {ok, bookingId, carId, previousCarId} or {ok: false, error}.
    Q_INVOKABLE QVariantMap reassignBooking(qint64 id, int carId = 0);
    QVariantMap tariff() const;
    double demandRate() const;
    // Applies and stores the tariff fields given (others keep their value) and the demand rate
    // (rides per minute, 0 = off). Empty on success, else what is wrong (nothing applied).
    Q_INVOKABLE QString applyPricing(const QVariantMap &tariff, double ridesPerMinute);
    // Switches the execution model while serving, off the GUI thread (the controller may take
    // seconds); runtimeApplied reports the outcome.
    Q_INVOKABLE void applyRuntime(const QString &mode, int workers, int threads, const QString &policy);
    // The run's event log, newest first: [{seq, time_ms, kind, text}].
    Q_INVOKABLE QVariantList events(int max) const;
    // The nodes of the server's cluster, as GET /admin/v1/cluster answers ({"cluster": false,
    // "nodes": [this server]} outside one; empty while not serving). Never waits on Redis.
    QJsonObject clusterNodes() const;

    // QML singleton: the instance main() created (an idle one if none, e.g. under QtQuickTest).
    static ConsoleBackend *create(QQmlEngine *engine, QJSEngine *scriptEngine);
    static void setInstance(ConsoleBackend *backend);

Q_SIGNALS:
    void servingChanged();
    void statsChanged();
    void bookingsChanged();
    void runtimeChanged();
    void applyingChanged();
    void runtimeApplied(const QString &error);
    void pricingChanged();

private:
    void pollStats();

    taxicore::ServerOptions m_options;
    std::unique_ptr<taxicore::ServerHost> m_host;
    std::unique_ptr<taxicore::TripEstimator> m_estimator; // ranks cars for a reassign
    QString m_error;
    QTimer m_statsTimer;
    QElapsedTimer m_rateClock;
    taxicore::RuntimeSettings m_runtime;
    QFutureWatcher<QString> m_applying;
    qint64 m_requests = 0;
    qint64 m_rateBase = 0;
    double m_rate = 0;
};
