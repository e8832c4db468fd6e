#include "OpsRules.h"

#include <QCoreApplication>
#include <QJsonObject>
#include <QRegularExpression>
#include <QSet>
#include <algorithm>
#include <cmath>

namespace ops {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("ops::Alert", text);
}

bool waitingForCar(taxicore::BookingState state)
{
    using S = taxicore::BookingState;
    return state == S::Requested || state == S::Assigned || state == S::Arriving;
}

// "12 min", "45 s": alert texts read at a glance.
QString shortDuration(double seconds)
{
    if (seconds >= 120)
        return QStringLiteral("%1 min").arg(std::lround(seconds / 60));
    return QStringLiteral("%1 s").arg(std::lround(seconds));
}

int rank(Alert::Kind kind)
{
    return int(kind); // the enum is declared in order of urgency
}

} // namespace

double percentile(std::vector<double> values, double p)
{
    if (values.empty())
        return 0;
    const auto n = values.size();
    // Nearest rank: the smallest value with at least p·n values at or below it.
    const auto rankOfP = size_t(std::max(1.0, std::ceil(std::clamp(p, 0.0, 1.0) * double(n))));
    const auto k = std::min(n, rankOfP) - 1;
    std::nth_element(values.begin(), values.begin() + std::ptrdiff_t(k), values.end());
    return values[k];
}

double utilisation(const CarCounts &cars)
{
    int onDuty = 0;
    for (size_t state = 1; state < cars.size(); ++state)
        onDuty += cars[state];
    const int available = cars[size_t(taxicore::CarState::Available)];
    return onDuty > 0 ? double(onDuty - available) / double(onDuty) : 0.0;
}

Kpis computeKpis(const std::vector<taxicore::BookingSnapshot> &bookings, const CarCounts &cars, int64_t nowMs,
                 double simSpeed)
{
    Kpis k;
    std::vector<double> pickups;
    int recent = 0;
    for (const auto &b : bookings) {
        if (taxicore::isOpen(b.state)) {
            ++k.openBookings;
            if (waitingForCar(b.state)) {
                ++k.waitingForPickup;
                k.unassigned += b.carId == 0;
            }
        }
        if (b.arrivedMs > 0 && b.arrivedMs >= b.createdMs && nowMs - b.arrivedMs <= kPickupWindowMs)
            pickups.push_back(double(b.arrivedMs - b.createdMs) / 1000.0 * simSpeed);
        recent += b.createdMs > nowMs - kRateWindowMs && b.createdMs <= nowMs;
    }
    k.pickupSamples = int(pickups.size());
    k.medianPickupS = percentile(pickups, 0.5);
    k.p90PickupS = percentile(std::move(pickups), 0.9);
    k.utilisation = utilisation(cars);
    k.bookingsPerMinute = double(recent) * 60'000.0 / double(kRateWindowMs);
    return k;
}

std::vector<Alert> waitingBookingAlerts(const std::vector<taxicore::BookingSnapshot> &bookings, int64_t nowMs,
                                        int64_t monotonicNowMs, double simSpeed, const AlertThresholds &thresholds)
{
    std::vector<Alert> out;
    for (const auto &b : bookings) {
        if (!waitingForCar(b.state))
            continue;
        const int64_t waitedMs = b.createdMonoMs != 0 ? monotonicNowMs - b.createdMonoMs : nowMs - b.createdMs;
        const double waited = double(waitedMs) / 1000.0 * simSpeed;
        if (waited <= thresholds.waitingS)
            continue;
        Alert a;
        a.kind = Alert::Kind::WaitingBooking;
        a.bookingId = qint64(b.id);
        a.carId = b.carId;
        a.hasPosition = true;
        a.position = b.pickup;
        a.ageS = waited;
        a.text = b.carId ? tr("Booking #%1 waiting %2 (car #%3)").arg(b.id).arg(shortDuration(waited)).arg(b.carId)
                         : tr("Booking #%1 waiting %2, no car").arg(b.id).arg(shortDuration(waited));
        out.push_back(a);
    }
    return out;
}

bool isStale(const taxicore::CarSnapshot &car, int64_t nowMs, const AlertThresholds &thresholds)
{
    if (car.state == taxicore::CarState::Offline || car.state == taxicore::CarState::Waiting)
        return false;
    return double(nowMs - car.updatedMs) / 1000.0 > thresholds.staleCarS;
}

std::optional<Alert> staleCarAlert(const taxicore::CarSnapshot &car, int64_t nowMs, const AlertThresholds &thresholds)
{
    if (!isStale(car, nowMs, thresholds))
        return std::nullopt;
    const double silentS = double(nowMs - car.updatedMs) / 1000.0;
    Alert a;
    a.kind = Alert::Kind::StaleCar;
    a.carId = car.id;
    a.bookingId = qint64(car.bookingId);
    a.hasPosition = true;
    a.position = car.position;
    a.ageS = silentS;
    a.text = tr("Car #%1 (%2): no position for %3")
                 .arg(car.id)
                 .arg(QLatin1StringView(taxicore::carStateName(car.state)))
                 .arg(shortDuration(silentS));
    return a;
}

std::vector<Alert> eventAlerts(const QJsonArray &newestEvents, int64_t nowMs)
{
    static const QRegularExpression workerIndex(QStringLiteral("^worker (\\d+)"));
    std::vector<Alert> out;
    bool breakerReset = false; // a newer switch to processes mode gave the workers a fresh start
    bool breakerSeen = false;
    QSet<int> workersSeen;
    for (const QJsonValue &value : newestEvents) {
        const QJsonObject e = value.toObject();
        const QString kind = e.value(QStringLiteral("kind")).toString();
        const QString text = e.value(QStringLiteral("text")).toString();
        const auto timeMs = qint64(e.value(QStringLiteral("time_ms")).toDouble());
        if (kind == QLatin1String("switch") && text.startsWith(QLatin1String("mode processes"))) {
            breakerReset = true;
        } else if (kind == QLatin1String("breaker") && !breakerReset && !breakerSeen) {
            breakerSeen = true;
            Alert a;
            a.kind = Alert::Kind::Breaker;
            a.ageS = double(nowMs - timeMs) / 1000.0;
            a.text = tr("Breaker tripped: %1 — serving without worker processes").arg(text);
            out.push_back(a);
        } else if ((kind == QLatin1String("crash") || kind == QLatin1String("stall"))
                   && nowMs - timeMs <= kWorkerAlertWindowMs) {
            const auto match = workerIndex.match(text);
            const int index = match.hasMatch() ? match.captured(1).toInt() : 0;
            if (workersSeen.contains(index))
                continue;
            workersSeen.insert(index);
            Alert a;
            a.kind = Alert::Kind::Worker;
            a.workerIndex = index;
            a.ageS = double(nowMs - timeMs) / 1000.0;
            QString what = text; // "worker 2 (pid 812) crashed", "worker 2 silent for 3100 ms: killed"
            if (!what.isEmpty())
                what[0] = what[0].toUpper();
            a.text = tr("%1 — restarting").arg(what);
            out.push_back(a);
        }
    }
    return out;
}

void sortAlerts(std::vector<Alert> &alerts)
{
    std::stable_sort(alerts.begin(), alerts.end(), [](const Alert &a, const Alert &b) {
        return rank(a.kind) != rank(b.kind) ? rank(a.kind) < rank(b.kind) : a.ageS > b.ageS;
    });
}

} // namespace ops
