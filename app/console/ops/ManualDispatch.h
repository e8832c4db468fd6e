#pragma once

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QObject>
#include <QPointer>
#include <QUrl>
#include <qqmlregistration.h>

class ConsoleBackend;

// Manual dispatch: the operator picks a booking, then clicks a car on the map, and the booking
// goes to that car through the admin API (POST /admin/v1/bookings/{id}/reassign {"car_id"}) with
// the console's admin token — the same door every operator tool uses — so a refusal reads as the
// server gave it (409 car_not_available, illegal_transition, ...). Never blocks the GUI thread.
class ManualDispatch : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(ConsoleBackend *backend READ backend WRITE setBackend NOTIFY backendChanged)
    // The booking waiting for its car to be clicked; 0 when none is picked.
    Q_PROPERTY(qint64 bookingId READ bookingId NOTIFY stateChanged)
    Q_PROPERTY(bool busy READ busy NOTIFY stateChanged)
    // The last outcome for the operator ("" before any); failed: it was a refusal or an error.
    Q_PROPERTY(QString message READ message NOTIFY stateChanged)
    Q_PROPERTY(bool failed READ failed NOTIFY stateChanged)

public:
    // How long a reassign may take (the server answers once its ledger has the move).
    static constexpr int kRequestTimeoutMs = 10000;

    explicit ManualDispatch(QObject *parent = nullptr);
    ~ManualDispatch() override;

    ConsoleBackend *backend() const;
    void setBackend(ConsoleBackend *backend);
    qint64 bookingId() const { return m_bookingId; }
    bool busy() const { return m_reply != nullptr; }
    QString message() const { return m_message; }
    bool failed() const { return m_failed; }

    // Picks the booking the next car click goes to (0 or a negative id: none).
    Q_INVOKABLE void pick(qint64 bookingId);
    Q_INVOKABLE void cancel();
    // Sends the picked booking to `carId`; false (nothing sent) when no booking is picked or a
    // request is still under way.
    Q_INVOKABLE bool assignTo(int carId);

    // The reassign endpoint of the server at `base` for `bookingId`.
    static QUrl reassignUrl(const QUrl &base, qint64 bookingId);

Q_SIGNALS:
    void backendChanged();
    void stateChanged();
    // A request ended: `status` is the HTTP status (0: no answer), `carId` the booking's car now.
    void finished(bool ok, int status, qint64 bookingId, int carId, const QString &message);

private:
    void onReply();
    void settle(bool ok, const QString &message);

    QPointer<ConsoleBackend> m_backend;
    QNetworkAccessManager m_network;
    QPointer<QNetworkReply> m_reply;
    qint64 m_bookingId = 0;
    int m_requestedCarId = 0;
    QString m_message;
    bool m_failed = false;
};
