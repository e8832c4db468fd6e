#include "OperationsKpis.h"

#include "ConsoleBackend.h"

#include "control/EventLog.h"
#include "fleet/FleetStore.h"
#include "region/Clock.h"

#include <QSettings>
#include <algorithm>

OperationsKpis::OperationsKpis(QObject *parent)
    : QObject(parent)
{
    // Settings with defaults (README: console settings); the rule ignores values that are not > 0.
    const QSettings settings;
    setWaitingAlertS(settings.value(QStringLiteral("ops/waitingAlertS"), ops::kDefaultWaitingAlertS).toDouble());
    setStaleCarS(settings.value(QStringLiteral("ops/staleCarS"), ops::kDefaultStaleCarS).toDouble());
    m_timer.setInterval(kSampleIntervalMs);
    connect(&m_timer, &QTimer::timeout, this, &OperationsKpis::sample);
}

ConsoleBackend *OperationsKpis::backend() const
{
    return m_backend;
}

void OperationsKpis::setBackend(ConsoleBackend *backend)
{
    if (m_backend == backend)
        return;
    m_backend = backend;
    m_backend ? m_timer.start() : m_timer.stop();
    Q_EMIT backendChanged();
    sample();
}

void OperationsKpis::setWaitingAlertS(double seconds)
{
    if (!(seconds > 0) || seconds == m_thresholds.waitingS)
        return;
    m_thresholds.waitingS = seconds;
    Q_EMIT thresholdsChanged();
}

void OperationsKpis::setStaleCarS(double seconds)
{
    if (!(seconds > 0) || seconds == m_thresholds.staleCarS)
        return;
    m_thresholds.staleCarS = seconds;
    Q_EMIT thresholdsChanged();
}

void OperationsKpis::sample()
{
    taxicore::FleetStore *fleet = m_backend ? m_backend->fleet() : nullptr;
    if (!fleet) {
        m_kpis = {};
        m_carsOnDuty = 0;
        m_alertsNotShown = 0;
        m_alerts.setAlerts({});
        Q_EMIT sampled();
        return;
    }
    const int64_t now = taxicore::clock::wallMs();
    const double simSpeed = fleet->simSpeed();

    // One pass over the cars: the counts for utilisation and the stale ones.
    ops::CarCounts cars{};
    std::vector<taxicore::CarSnapshot> stale;
    const int count = fleet->carCount();
    for (int id = 1; id <= count; ++id) {
        const auto car = fleet->car(id);
        if (!car)
            continue;
        ++cars[std::min(size_t(car->state), cars.size() - 1)];
        if (ops::isStale(*car, now, m_thresholds))
            stale.push_back(*car);
    }
    const std::vector<taxicore::BookingSnapshot> bookings = fleet->recentBookings(kBookingsRead);
    m_kpis = ops::computeKpis(bookings, cars, now, simSpeed);
    m_carsOnDuty = count - cars[size_t(taxicore::CarState::Offline)];

    std::vector<ops::Alert> alerts = ops::eventAlerts(taxicore::EventLog(fleet->control()).newest(kEventsRead), now);
    for (auto &a : ops::waitingBookingAlerts(bookings, now, taxicore::clock::monotonicMs(), simSpeed, m_thresholds))
        alerts.push_back(std::move(a));
    // Thousands of cars may go stale at once (a feed stops): only the longest silent are worded.
    const size_t staleShown = std::min(stale.size(), size_t(kMaxAlerts));
    std::partial_sort(stale.begin(), stale.begin() + std::ptrdiff_t(staleShown), stale.end(),
                      [](const auto &a, const auto &b) { return a.updatedMs < b.updatedMs; });
    for (size_t i = 0; i < staleShown; ++i)
        alerts.push_back(*ops::staleCarAlert(stale[i], now, m_thresholds));
    ops::sortAlerts(alerts);
    m_alertsNotShown = std::max(0, int(alerts.size() + stale.size() - staleShown) - kMaxAlerts);
    if (m_alertsNotShown > 0)
        alerts.resize(size_t(kMaxAlerts));
    m_alerts.setAlerts(std::move(alerts));
    Q_EMIT sampled();
}
