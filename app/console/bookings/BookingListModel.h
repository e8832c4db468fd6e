#pragma once

#include "fleet/FleetTypes.h"

#include <QAbstractListModel>
#include <QPointer>
#include <QTimer>
#include <qqmlregistration.h>
#include <vector>

class ConsoleBackend;

// Open and recent bookings, newest first, polled from the fleet and updated row by row.
class BookingListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(ConsoleBackend *backend READ backend WRITE setBackend NOTIFY backendChanged)
    Q_PROPERTY(QString filterText READ filterText WRITE setFilterText NOTIFY filterChanged)
    Q_PROPERTY(bool openOnly READ openOnly WRITE setOpenOnly NOTIFY filterChanged)
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

public:
    enum Roles {
        BookingIdRole = Qt::UserRole,
        StateRole, // "assigned", "arriving", "on_trip", ... (QML: bookingState; Item has a state)
        IsOpenRole,
        RiderRole,
        CarIdRole,
        EtaSecondsRole,
        FareRole, // final fare; 0 until completed
        CreatedMsRole,
        CanCancelRole, // the server accepts a cancel now (assigned, arriving; not on a trip)
    };
    Q_ENUM(Roles)

    static constexpr int kMaxBookings = 500;
    static constexpr int kPollIntervalMs = 500;

    explicit BookingListModel(QObject *parent = nullptr);
    ~BookingListModel() override;

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    ConsoleBackend *backend() const;
    void setBackend(ConsoleBackend *backend);
    QString filterText() const { return m_filterText; }
    void setFilterText(const QString &text);
    bool openOnly() const { return m_openOnly; }
    void setOpenOnly(bool openOnly);

    // Replaces the bookings (newest first or not); rows are inserted, removed and changed in place.
    void setBookings(std::vector<taxicore::BookingSnapshot> bookings);
    Q_INVOKABLE void refresh();
    Q_INVOKABLE bool cancel(qint64 bookingId);
    // Another car for the booking (0: the best available); see ConsoleBackend::reassignBooking.
    Q_INVOKABLE QVariantMap reassign(qint64 bookingId, int carId = 0);
    Q_INVOKABLE int rowOf(qint64 bookingId) const;

Q_SIGNALS:
    void backendChanged();
    void filterChanged();
    void countChanged();

private:
    bool accepts(const taxicore::BookingSnapshot &booking) const;
    void applyFilter();

    QPointer<ConsoleBackend> m_backend;
    std::vector<taxicore::BookingSnapshot> m_all;  // as last polled
    std::vector<taxicore::BookingSnapshot> m_rows; // m_all filtered, highest id first
    QString m_filterText;
    bool m_openOnly = false;
    QTimer m_pollTimer;
};
