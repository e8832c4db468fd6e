// The operations view's arithmetic (app/console/ops/OpsRules): the KPIs of the top bar —
// median and 90th percentile time to pickup, fleet utilisation, bookings per minute, open and
// waiting bookings — and the alert rules: a booking waiting past its threshold, a stale car,
// a worker restarting, the crash-loop breaker; the alert list updating in place. Plain data in,
// figures out; no server.
#include "ops/OperationsKpis.h"
#include "ops/OpsRules.h"

#include <QAbstractItemModelTester>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>

using taxicore::BookingSnapshot;
using taxicore::BookingState;
using taxicore::CarSnapshot;
using taxicore::CarState;

namespace {
constexpr int64_t kNow = 1'800'000'000'000; // wall clock, ms
constexpr int64_t kMonoNow = 90'000'000;    // the host's monotonic clock, ms

BookingSnapshot booking(uint64_t id, BookingState state, int64_t createdAgoMs, int64_t arrivedAfterMs = -1,
                        int carId = 7)
{
    BookingSnapshot b;
    b.id = id;
    b.state = state;
    b.carId = carId;
    b.createdMs = kNow - createdAgoMs;
    b.arrivedMs = arrivedAfterMs >= 0 ? b.createdMs + arrivedAfterMs : 0;
    b.pickup = {57.70, 11.97};
    return b;
}

CarSnapshot car(int id, CarState state, int64_t silentMs)
{
    CarSnapshot c;
    c.id = id;
    c.state = state;
    c.updatedMs = kNow - silentMs;
    c.position = {57.71, 11.98};
    return c;
}

QJsonObject logEvent(const char *kind, const QString &text, int64_t agoMs)
{
    return {{QStringLiteral("kind"), QLatin1String(kind)},
            {QStringLiteral("text"), text},
            {QStringLiteral("time_ms"), double(kNow - agoMs)}};
}
} // namespace

class ConsoleOpsKpisTest : public QObject {
    Q_OBJECT

private Q_SLOTS:
    void percentileIsTheNearestRank()
    {
        QCOMPARE(ops::percentile({}, 0.5), 0.0);
        QCOMPARE(ops::percentile({42}, 0.9), 42.0);
        // 1..10: the median is the 5th value, the 90th percentile the 9th.
        const std::vector<double> tens{10, 3, 7, 1, 9, 2, 8, 4, 6, 5};
        QCOMPARE(ops::percentile(tens, 0.5), 5.0);
        QCOMPARE(ops::percentile(tens, 0.9), 9.0);
        QCOMPARE(ops::percentile(tens, 1.0), 10.0);
        QCOMPARE(ops::percentile(tens, 0.0), 1.0);
        // One slow pickup among 20 moves p90 only when more than a tenth are slow.
        std::vector<double> mostlyFast(19, 60);
        mostlyFast.push_back(900);
        QCOMPARE(ops::percentile(mostlyFast, 0.9), 60.0);
        mostlyFast.push_back(900);
        mostlyFast.push_back(900);
        QCOMPARE(ops::percentile(mostlyFast, 0.9), 900.0);
    }

    void utilisationIsTheBusyShareOfCarsOnDuty()
    {
        // offline, available, to pickup, on trip, waiting
        QCOMPARE(ops::utilisation({0, 0, 0, 0, 0}), 0.0);
        QCOMPARE(ops::utilisation({50, 0, 0, 0, 0}), 0.0); // nobody on duty
        QCOMPARE(ops::utilisation({0, 10, 0, 0, 0}), 0.0);
        QCOMPARE(ops::utilisation({0, 0, 3, 4, 1}), 1.0);
        // Offline cars are not in the fleet on duty: 6 busy of 8 on duty.
        QCOMPARE(ops::utilisation({100, 2, 2, 3, 1}), 0.75);
    }

    void kpisOverBookings()
    {
        const std::vector<BookingSnapshot> bookings{
            booking(1, BookingState::Assigned, 10'000, -1),         // booked 10 s ago, car on its way
            booking(2, BookingState::Requested, 20'000, -1, 0),     // no car yet
            booking(3, BookingState::Arriving, 90'000, 60'000),     // car there after 60 s
            booking(4, BookingState::OnTrip, 200'000, 120'000),     // picked up: open, not waiting
            booking(5, BookingState::Completed, 400'000, 180'000),  // ended: not open, still counted
            booking(6, BookingState::Cancelled, 30'000, -1),        // made within the minute
            booking(7, BookingState::Completed, 3'600'000, 60'000), // arrived > 15 min ago: not counted
        };
        const ops::Kpis k = ops::computeKpis(bookings, {0, 6, 2, 1, 1}, kNow, 1.0);
        QCOMPARE(k.openBookings, 4);
        QCOMPARE(k.waitingForPickup, 3);
        QCOMPARE(k.unassigned, 1);
        QCOMPARE(k.pickupSamples, 3); // 60, 120, 180 s
        QCOMPARE(k.medianPickupS, 120.0);
        QCOMPARE(k.p90PickupS, 180.0);
        QCOMPARE(k.bookingsPerMinute, 3.0); // 1, 2, 6
        QCOMPARE(k.utilisation, 0.4);

        // At 10× simulated speed the same wall-clock waits are ten times the simulated seconds.
        QCOMPARE(ops::computeKpis(bookings, {}, kNow, 10.0).medianPickupS, 1200.0);
        QCOMPARE(ops::computeKpis({}, {}, kNow, 1.0).pickupSamples, 0);
    }

    void aBookingAlertsOnceItWaitsPastTheThreshold()
    {
        ops::AlertThresholds t;
        t.waitingS = 300;
        const std::vector<BookingSnapshot> bookings{
            booking(1, BookingState::Assigned, 299'000),         // just under
            booking(2, BookingState::Assigned, 301'000),         // just over
            booking(3, BookingState::Requested, 900'000, -1, 0), // long over, no car
            booking(4, BookingState::OnTrip, 900'000),           // on board: not waiting
            booking(5, BookingState::Cancelled, 900'000),        // ended
        };
        const auto alerts = ops::waitingBookingAlerts(bookings, kNow, kMonoNow, 1.0, t);
        QCOMPARE(alerts.size(), size_t(2));
        QCOMPARE(alerts[0].bookingId, 2);
        QCOMPARE(alerts[0].carId, 7);
        QVERIFY(alerts[0].hasPosition);
        QCOMPARE(alerts[0].position.lat, 57.70);
        QVERIFY2(alerts[0].text.contains(QLatin1String("#2")), qPrintable(alerts[0].text));
        QCOMPARE(alerts[1].bookingId, 3);
        QVERIFY2(alerts[1].text.contains(QLatin1String("no car")), qPrintable(alerts[1].text));
        // The same wait in simulated seconds at 2× speed crosses the threshold sooner.
        QCOMPARE(
            ops::waitingBookingAlerts({booking(1, BookingState::Assigned, 151'000)}, kNow, kMonoNow, 2.0, t).size(),
            size_t(1));
    }

    // The wall clock stepped two hours forward: createdMs reads two hours ago, but the booking's
    // monotonic stamp says a minute. No alert at a five-minute threshold; past it on the monotonic
    // clock, the alert words the real wait.
    void aWallClockStepDoesNotMakeARiderLate()
    {
        ops::AlertThresholds t;
        t.waitingS = 300;
        BookingSnapshot b = booking(1, BookingState::Assigned, 2 * 3600 * 1000);
        b.createdMonoMs = kMonoNow - 60'000;
        QVERIFY(ops::waitingBookingAlerts({b}, kNow, kMonoNow, 1.0, t).empty());
        b.createdMonoMs = kMonoNow - 400'000;
        const auto alerts = ops::waitingBookingAlerts({b}, kNow, kMonoNow, 1.0, t);
        QCOMPARE(alerts.size(), size_t(1));
        QCOMPARE(alerts[0].ageS, 400.0);
    }

    void aCarOnDutyAlertsWhenItsPositionIsStale()
    {
        ops::AlertThresholds t;
        t.staleCarS = 60;
        QVERIFY(!ops::isStale(car(1, CarState::Available, 59'000), kNow, t));
        QVERIFY(ops::isStale(car(1, CarState::Available, 61'000), kNow, t));
        QVERIFY(ops::isStale(car(1, CarState::OnTrip, 61'000), kNow, t));
        // Offline cars and cars waiting at a pickup report nothing new by design.
        QVERIFY(!ops::isStale(car(1, CarState::Offline, 3'600'000), kNow, t));
        QVERIFY(!ops::isStale(car(1, CarState::Waiting, 3'600'000), kNow, t));
        const auto alert = ops::staleCarAlert(car(12, CarState::ToPickup, 180'000), kNow, t);
        QVERIFY(alert);
        QCOMPARE(alert->carId, 12);
        QVERIFY(alert->hasPosition);
        QVERIFY2(alert->text.contains(QLatin1String("#12")) && alert->text.contains(QLatin1String("3 min")),
                 qPrintable(alert->text));
    }

    void workersAndTheBreakerFromTheEventLog()
    {
        // Newest first, as EventLog::newest gives them.
        const QJsonArray events{
            logEvent("switch", QStringLiteral("mode pool, workers 0, threads 4, policy round-robin"), 1'000),
            logEvent("fallback", QStringLiteral("workers crash-looping: falling back to pool"), 1'100),
            logEvent("breaker", QStringLiteral("5 crashes within 30 s: no more respawns"), 1'200),
            logEvent("crash", QStringLiteral("worker 2 (pid 812) crashed"), 2'000),
            logEvent("crash", QStringLiteral("worker 2 (pid 800) crashed"), 5'000), // same worker: one alert
            logEvent("stall", QStringLiteral("worker 3 silent for 3100 ms: killed"), 10'000),
            logEvent("crash", QStringLiteral("worker 4 (pid 700) crashed"), 120'000), // too long ago
        };
        auto alerts = ops::eventAlerts(events, kNow);
        ops::sortAlerts(alerts);
        QCOMPARE(alerts.size(), size_t(3));
        QCOMPARE(alerts[0].kind, ops::Alert::Kind::Breaker);
        QVERIFY2(alerts[0].text.contains(QLatin1String("5 crashes")), qPrintable(alerts[0].text));
        QCOMPARE(alerts[1].kind, ops::Alert::Kind::Worker);
        QCOMPARE(alerts[1].workerIndex, 3); // the older condition first within a kind
        QCOMPARE(alerts[2].workerIndex, 2);
        QVERIFY2(alerts[2].text.contains(QLatin1String("restarting")), qPrintable(alerts[2].text));

        // A later switch back to processes mode resets the breaker: no breaker alert.
        QJsonArray reset = events;
        reset.prepend(
            logEvent("switch", QStringLiteral("mode processes, workers 4, threads 4, policy round-robin"), 10));
        for (const auto &a : ops::eventAlerts(reset, kNow))
            QVERIFY(a.kind != ops::Alert::Kind::Breaker);
    }

    void alertsSortBreakerFirst()
    {
        std::vector<ops::Alert> alerts(4);
        alerts[0].kind = ops::Alert::Kind::StaleCar;
        alerts[1].kind = ops::Alert::Kind::WaitingBooking;
        alerts[1].ageS = 10;
        alerts[2].kind = ops::Alert::Kind::WaitingBooking;
        alerts[2].ageS = 20;
        alerts[3].kind = ops::Alert::Kind::Breaker;
        ops::sortAlerts(alerts);
        QCOMPARE(alerts[0].kind, ops::Alert::Kind::Breaker);
        QCOMPARE(alerts[1].ageS, 20.0);
        QCOMPARE(alerts[2].ageS, 10.0);
        QCOMPARE(alerts[3].kind, ops::Alert::Kind::StaleCar);
    }

    void alertsChangeInPlaceWhileTheSameItemsStay()
    {
        OpsAlertModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        std::vector<ops::Alert> alerts(2);
        alerts[0].bookingId = 4;
        alerts[0].text = QStringLiteral("Booking #4 waiting 11 min");
        alerts[1].kind = ops::Alert::Kind::StaleCar;
        alerts[1].carId = 9;
        model.setAlerts(alerts);
        QCOMPARE(model.rowCount(), 2);

        // A second later: the same items, one text changed — no reset (rows under the pointer stay).
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        alerts[0].text = QStringLiteral("Booking #4 waiting 12 min");
        model.setAlerts(alerts);
        QCOMPARE(reset.count(), 0);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(model.index(0).data(OpsAlertModel::TextRole).toString(), alerts[0].text);

        // Another item: the list is replaced.
        alerts[1].carId = 10;
        model.setAlerts(alerts);
        QCOMPARE(reset.count(), 1);
        QCOMPARE(model.index(1).data(OpsAlertModel::CarIdRole).toInt(), 10);
        QCOMPARE(model.index(1).data(OpsAlertModel::KindRole).toString(), QStringLiteral("stale_car"));
    }

    void noServerNoFigures()
    {
        OperationsKpis kpis;
        kpis.sample();
        QCOMPARE(kpis.openBookings(), 0);
        QCOMPARE(kpis.alerts()->rowCount(), 0);
        QCOMPARE(kpis.waitingAlertS(), ops::kDefaultWaitingAlertS);
        kpis.setWaitingAlertS(-5); // refused: a threshold is a positive number of seconds
        QCOMPARE(kpis.waitingAlertS(), ops::kDefaultWaitingAlertS);
    }
};

QTEST_GUILESS_MAIN(ConsoleOpsKpisTest)
#include "console_ops_kpis_test.moc"
