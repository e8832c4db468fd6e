#include "TripReport.h"

#include "ConsoleBackend.h"
#include "ledger/Ledger.h"

#include <QDateTime>
#include <QSaveFile>
#include <QTimeZone>
#include <QtConcurrent/QtConcurrentRun>
#include <limits>

namespace {
constexpr int kWeekDays = 7;

bool writeFile(const QString &path, const QByteArray &content, QString &error)
{
    QSaveFile file(path); // all or nothing: a half-written CSV is worse than none
    if (file.open(QIODevice::WriteOnly) && file.write(content) == content.size() && file.commit())
        return true;
    error = QObject::tr("cannot write %1: %2").arg(path, file.errorString());
    return false;
}
} // namespace

TripReport::TripReport(QObject *parent)
    : QObject(parent)
{
    connect(&m_watcher, &QFutureWatcher<Reading>::finished, this, &TripReport::onRead);
    const QString today = QDate::currentDate().toString(Qt::ISODate);
    m_customFrom = today;
    m_customTo = today;
}

TripReport::~TripReport()
{
    m_watcher.waitForFinished(); // the read holds a copy of the reader, never this object
}

ConsoleBackend *TripReport::backend() const
{
    return m_backend;
}

void TripReport::setBackend(ConsoleBackend *backend)
{
    if (m_backend == backend)
        return;
    if (m_backend)
        disconnect(m_backend, nullptr, this, nullptr);
    m_backend = backend;
    if (m_backend)
        connect(m_backend, &ConsoleBackend::servingChanged, this, &TripReport::refresh);
    Q_EMIT backendChanged();
    refresh();
}

void TripReport::setReader(const taxicore::LedgerReader &reader)
{
    m_reader.emplace(reader);
    refresh();
}

void TripReport::setRange(const QString &range)
{
    if (range == m_range)
        return;
    m_range = range;
    Q_EMIT spanChanged();
    refresh();
}

void TripReport::setCustomFrom(const QString &day)
{
    if (day == m_customFrom)
        return;
    m_customFrom = day;
    Q_EMIT spanChanged();
    if (m_range == QLatin1String("custom"))
        refresh();
}

void TripReport::setCustomTo(const QString &day)
{
    if (day == m_customTo)
        return;
    m_customTo = day;
    Q_EMIT spanChanged();
    if (m_range == QLatin1String("custom"))
        refresh();
}

// Whole local days: [first day 00:00, day after the last 00:00); "today" ends now.
std::pair<qint64, qint64> TripReport::span() const
{
    const QDate today = QDate::currentDate();
    const qint64 now = QDateTime::currentMSecsSinceEpoch() + 1;
    if (m_range == QLatin1String("week"))
        return {today.addDays(1 - kWeekDays).startOfDay().toMSecsSinceEpoch(), now};
    if (m_range == QLatin1String("custom")) {
        const QDate from = QDate::fromString(m_customFrom, Qt::ISODate);
        const QDate to = QDate::fromString(m_customTo, Qt::ISODate);
        if (from.isValid() && to.isValid() && from <= to)
            return {from.startOfDay().toMSecsSinceEpoch(), to.addDays(1).startOfDay().toMSecsSinceEpoch()};
        return {0, 0}; // refresh() names the problem
    }
    return {today.startOfDay().toMSecsSinceEpoch(), now};
}

void TripReport::refresh()
{
    if (m_loading) {
        m_refreshAgain = true;
        return;
    }
    std::optional<taxicore::LedgerReader> reader = m_reader;
    if (!reader && m_backend && m_backend->ledger())
        reader.emplace(m_backend->ledger()->options()); // the embedded server's SQLite file
    const auto [from, to] = span();
    QString problem;
    if (!reader)
        problem = tr("No ledger: the server is not running.");
    else if (from >= to)
        problem = tr("Pick a first day on or before the last day (yyyy-MM-dd).");
    if (!problem.isEmpty()) {
        m_error = problem;
        m_allTrips.clear();
        m_report = taxicore::buildLedgerReport({}, from, to, QTimeZone::systemTimeZone());
        m_benchmarkRuns.clear();
        m_hourly.setReport(m_report);
        m_trips.setTrips(m_allTrips);
        Q_EMIT loaded();
        return;
    }
    m_watcher.setFuture(QtConcurrent::run([reader = *reader, from = from, to = to] {
        return Reading{from, to, reader.trips(from, to, std::numeric_limits<int>::max()), reader.events(from, to)};
    }));
    m_loading = true;
    Q_EMIT loadingChanged();
}

void TripReport::onRead()
{
    Reading reading = m_watcher.result();
    m_error = !reading.trips.ok() ? reading.trips.error : reading.events.error;
    m_allTrips = std::move(reading.trips.value);
    m_report = taxicore::buildLedgerReport(m_allTrips, reading.fromMs, reading.toMs, QTimeZone::systemTimeZone());
    m_benchmarkRuns.clear();
    for (const taxicore::EventRecord &event : reading.events.value) {
        if (event.kind != QLatin1String("benchmark"))
            continue;
        QVariantMap run = event.detail.toVariantMap();
        run.insert(QStringLiteral("atMs"), event.atMs);
        m_benchmarkRuns.prepend(run); // newest first
    }
    m_hourly.setReport(m_report);
    m_trips.setTrips(m_allTrips);
    m_loading = false;
    Q_EMIT loadingChanged();
    Q_EMIT loaded();
    if (std::exchange(m_refreshAgain, false))
        refresh();
}

QString TripReport::byHourPath(const QString &tripsPath)
{
    QString base = tripsPath;
    if (base.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive))
        base.chop(4);
    return base + QStringLiteral("-by-hour.csv");
}

bool TripReport::exportCsv(const QUrl &file)
{
    QString path = file.isLocalFile() ? file.toLocalFile() : file.toString();
    if (!path.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive))
        path += QStringLiteral(".csv");
    QString problem;
    const bool written = writeFile(path, taxicore::ledgerTripsCsv(m_allTrips), problem)
                         && writeFile(byHourPath(path), taxicore::ledgerReportCsv(m_report), problem);
    if (!written) {
        m_error = problem;
        Q_EMIT loaded();
    }
    return written;
}
