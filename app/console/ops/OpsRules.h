#pragma once

#include "fleet/FleetTypes.h"

#include <QJsonArray>
#include <QString>
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

// The operations view's arithmetic, pure so that tests can feed it made-up bookings, cars and
// events: the top bar's KPIs and the rules that raise an alert.
namespace ops {

// Time to pickup is measured over the cars that reached their pickup within this window.
inline constexpr int64_t kPickupWindowMs = 15 * 60 * 1000;
// Bookings per minute counts the bookings made within the last minute (wall clock).
inline constexpr int64_t kRateWindowMs = 60 * 1000;
// Defaults of the alert thresholds (the console's settings ops/waitingAlertS, ops/staleCarS).
inline constexpr double kDefaultWaitingAlertS = 10 * 60; // a rider waiting for a car this long
inline constexpr double kDefaultStaleCarS = 60;          // a car on duty with no position this long
// A worker crash or kill stays an alert this long (the supervisor respawns it within seconds).
inline constexpr int64_t kWorkerAlertWindowMs = 60 * 1000;

// Nearest-rank percentile (p in [0, 1]) of `values`; 0 when empty.
double percentile(std::vector<double> values, double p);

// Cars by taxicore::CarState (offline, available, to pickup, on trip, waiting).
using CarCounts = std::array<int, 5>;

// Share of the cars on duty (not offline) that are not available: 0..1, 0 without cars on duty.
double utilisation(const CarCounts &cars);

struct Kpis {
    int openBookings = 0;     // requested, assigned, arriving or on trip
    int waitingForPickup = 0; // open and the rider not on board yet
    int unassigned = 0;       // of those, without a car
    double medianPickupS = 0; // booked → car at the pickup, simulated seconds
    double p90PickupS = 0;
    int pickupSamples = 0; // arrivals the two figures above come from
    double utilisation = 0;
    double bookingsPerMinute = 0;
};

// The KPIs over `bookings` (the newest ones the fleet holds) and the car counts at `nowMs`
// (wall clock); `simSpeed` converts wall time into the simulated seconds ETAs are given in.
Kpis computeKpis(const std::vector<taxicore::BookingSnapshot> &bookings, const CarCounts &cars, int64_t nowMs,
                 double simSpeed);

struct Alert {
    enum class Kind { Breaker, Worker, WaitingBooking, StaleCar };
    Kind kind = Kind::WaitingBooking;
    QString text;
    qint64 bookingId = 0;
    int carId = 0;
    int workerIndex = 0;
    bool hasPosition = false; // where the map centres when the alert is clicked
    taxicore::LatLng position;
    double ageS = 0; // how long the condition has lasted (ordering within a kind)
};

struct AlertThresholds {
    double waitingS = kDefaultWaitingAlertS;
    double staleCarS = kDefaultStaleCarS;
};

// A rider waiting (requested, assigned or arriving) for longer than the threshold, in simulated
// seconds since the booking was made: on the host's monotonic clock where the booking has a stamp
// there (BookingSnapshot::createdMonoMs, read against `monotonicNowMs`), so a step of the wall
// clock does not make every rider look hours late; else from its wall-clock `createdMs`.
std::vector<Alert> waitingBookingAlerts(const std::vector<taxicore::BookingSnapshot> &bookings, int64_t nowMs,
                                        int64_t monotonicNowMs, double simSpeed, const AlertThresholds &thresholds);
// A car on duty whose position is older than the threshold. A car waiting at a pickup stands
// still and reports nothing new, so it is never stale; nor is an offline car.
bool isStale(const taxicore::CarSnapshot &car, int64_t nowMs, const AlertThresholds &thresholds);
// The alert for a stale car, or none.
std::optional<Alert> staleCarAlert(const taxicore::CarSnapshot &car, int64_t nowMs, const AlertThresholds &thresholds);
// From the event log (newest first, {time_ms, kind, text}): the crash-loop breaker tripped
// (a "breaker" event newer than the last runtime "switch", which resets it), and workers that
// crashed or were killed within kWorkerAlertWindowMs (the supervisor is restarting them).
std::vector<Alert> eventAlerts(const QJsonArray &newestEvents, int64_t nowMs);

// Breaker first, then workers, then waiting bookings and stale cars, each the oldest first.
void sortAlerts(std::vector<Alert> &alerts);

} // namespace ops
