#pragma once

#include "HourlyTripsModel.h"
#include "TripListModel.h"
#include "ledger/LedgerReader.h"

#include <QFutureWatcher>
#include <QObject>
#include <QPointer>
#include <QUrl>
#include <QVariantList>
#include <optional>
#include <qqmlregistration.h>

class ConsoleBackend;

// The console's "Reports" view: completed trips of a date range read from the embedded server's
// ledger (LedgerReader on its own connection, off the GUI thread; never HTTP), their totals, the
// same by hour of day, the benchmark runs recorded in that range, and CSV export.
class TripReport : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(ConsoleBackend *backend READ backend WRITE setBackend NOTIFY backendChanged)
    // "today", "week" (the last 7 days, today included) or "custom" (customFrom..customTo).
    Q_PROPERTY(QString range READ range WRITE setRange NOTIFY spanChanged)
    // Dates of a custom range, "yyyy-MM-dd", both days included.
    Q_PROPERTY(QString customFrom READ customFrom WRITE setCustomFrom NOTIFY spanChanged)
    Q_PROPERTY(QString customTo READ customTo WRITE setCustomTo NOTIFY spanChanged)
    Q_PROPERTY(qint64 fromMs READ fromMs NOTIFY loaded)
    Q_PROPERTY(qint64 toMs READ toMs NOTIFY loaded)
    Q_PROPERTY(int tripCount READ tripCount NOTIFY loaded)
    Q_PROPERTY(double revenue READ revenue NOTIFY loaded)
    Q_PROPERTY(double averageFare READ averageFare NOTIFY loaded)
    Q_PROPERTY(QString currency READ currency NOTIFY loaded)
    Q_PROPERTY(QVariantList benchmarkRuns READ benchmarkRuns NOTIFY loaded)
    Q_PROPERTY(HourlyTripsModel *hourly READ hourly CONSTANT)
    Q_PROPERTY(TripListModel *trips READ trips CONSTANT)
    Q_PROPERTY(bool loading READ loading NOTIFY loadingChanged)
    Q_PROPERTY(QString error READ error NOTIFY loaded)

public:
    explicit TripReport(QObject *parent = nullptr);
    ~TripReport() override;

    ConsoleBackend *backend() const;
    void setBackend(ConsoleBackend *backend);
    // Reads this ledger instead of the backend's (tests, tools).
    void setReader(const taxicore::LedgerReader &reader);

    QString range() const { return m_range; }
    void setRange(const QString &range);
    QString customFrom() const { return m_customFrom; }
    void setCustomFrom(const QString &day);
    QString customTo() const { return m_customTo; }
    void setCustomTo(const QString &day);

    qint64 fromMs() const { return m_report.fromMs; }
    qint64 toMs() const { return m_report.toMs; }
    int tripCount() const { return m_report.trips; }
    double revenue() const { return m_report.revenue; }
    double averageFare() const { return m_report.averageFare; }
    QString currency() const { return m_report.currency; }
    QVariantList benchmarkRuns() const { return m_benchmarkRuns; }
    HourlyTripsModel *hourly() { return &m_hourly; }
    TripListModel *trips() { return &m_trips; }
    // Until onRead() has taken the result: the future itself stops running before that.
    bool loading() const { return m_loading; }
    QString error() const { return m_error; }

    // Reads the range again (the ledger grows while the server serves); `loaded` follows.
    Q_INVOKABLE void refresh();
    // Writes every trip of the report to `file` (.csv added if missing) and the by-hour table
    // next to it (<name>-by-hour.csv). False with error() set when a file cannot be written.
    Q_INVOKABLE bool exportCsv(const QUrl &file);
    // The by-hour file written next to a trips file.
    static QString byHourPath(const QString &tripsPath);

Q_SIGNALS:
    void backendChanged();
    void spanChanged();
    void loadingChanged();
    void loaded();

private:
    struct Reading {
        qint64 fromMs = 0;
        qint64 toMs = 0;
        taxicore::LedgerResult<std::vector<taxicore::TripRecord>> trips;
        taxicore::LedgerResult<std::vector<taxicore::EventRecord>> events;
    };
    std::pair<qint64, qint64> span() const;
    void onRead();

    QPointer<ConsoleBackend> m_backend;
    std::optional<taxicore::LedgerReader> m_reader;
    QString m_range = QStringLiteral("today");
    QString m_customFrom;
    QString m_customTo;
    QFutureWatcher<Reading> m_watcher;
    bool m_refreshAgain = false; // asked while a read was running
    bool m_loading = false;
    std::vector<taxicore::TripRecord> m_allTrips;
    taxicore::LedgerReport m_report;
    QVariantList m_benchmarkRuns;
    QString m_error;
    HourlyTripsModel m_hourly;
    TripListModel m_trips;
};
