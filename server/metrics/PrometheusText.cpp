#include "metrics/PrometheusText.h"

#include "fleet/FleetStore.h"
#include "metrics/MetricsLimits.h"

namespace taxicore {

namespace {

template <typename Read> uint64_t sumSlots(const FleetStore &fleet, Read read)
{
    uint64_t sum = 0;
    for (int i = 0; i < kMaxWorkers; ++i)
        sum += read(fleet.workerSlot(i));
    return sum;
}

QByteArray number(double v)
{
    return QByteArray::number(v, 'g', 10);
}

} // namespace

quint64 totalRequests(const FleetStore &fleet)
{
    return sumSlots(fleet, [](const WorkerSlot &s) { return s.requests.load(std::memory_order_relaxed); });
}

int failingLedgers(const FleetStore &fleet, int exceptSlot)
{
    const WorkerSlot *except = exceptSlot >= 0 ? &fleet.workerSlot(exceptSlot) : nullptr;
    return int(sumSlots(fleet, [except](const WorkerSlot &s) {
        if (&s == except)
            return 0;
        const WorkerSlotState state = s.state.load(std::memory_order_relaxed);
        const bool running = state == WorkerSlotState::Serving || state == WorkerSlotState::Draining;
        return running && s.ledgerFailing.load(std::memory_order_relaxed) != 0 ? 1 : 0;
    }));
}

QByteArray renderPrometheus(const FleetStore &fleet, const QList<QByteArray> &routeNames, const QByteArray &mode)
{
    constexpr auto relaxed = std::memory_order_relaxed;
    QByteArray out;
    out.reserve(16384);
    out += "# HELP taxicore_http_requests_total HTTP requests served, by route pattern and status.\n"
           "# TYPE taxicore_http_requests_total counter\n";
    for (int route = 0; route < kRouteKinds; ++route) {
        const QByteArray name = route < routeNames.size() ? routeNames[route] : QByteArray();
        if (name.isEmpty())
            continue;
        for (int st = 0; st < kStatusKinds; ++st) {
            const uint64_t n =
                sumSlots(fleet, [&](const WorkerSlot &s) { return s.byRouteStatus[route][st].load(relaxed); });
            if (n == 0)
                continue;
            const int code = kCountedStatuses[std::size_t(st)];
            out += "taxicore_http_requests_total{route=\"" + name + "\",status=\""
                   + (code ? QByteArray::number(code) : QByteArrayLiteral("other")) + "\"} " + QByteArray::number(n)
                   + '\n';
        }
    }
    out += "# HELP taxicore_http_request_duration_seconds Time from a parsed request to its response.\n"
           "# TYPE taxicore_http_request_duration_seconds histogram\n";
    uint64_t cumulative = 0;
    for (int b = 0; b < kLatencyBuckets; ++b) {
        cumulative += sumSlots(fleet, [&](const WorkerSlot &s) { return s.latency[b].load(relaxed); });
        out += "taxicore_http_request_duration_seconds_bucket{le=\"" + number(latencyBucketBoundUs(b) / 1e6) + "\"} "
               + QByteArray::number(cumulative) + '\n';
    }
    out += "taxicore_http_request_duration_seconds_bucket{le=\"+Inf\"} " + QByteArray::number(cumulative) + '\n';
    const uint64_t sumUs = sumSlots(fleet, [&](const WorkerSlot &s) { return s.latencySumUs.load(relaxed); });
    out += "taxicore_http_request_duration_seconds_sum " + number(double(sumUs) / 1e6) + '\n';
    out += "taxicore_http_request_duration_seconds_count " + QByteArray::number(cumulative) + '\n';
    out += "# HELP taxicore_open_connections Client connections open now.\n"
           "# TYPE taxicore_open_connections gauge\ntaxicore_open_connections "
           + QByteArray::number(sumSlots(fleet, [&](const WorkerSlot &s) { return s.openConnections.load(relaxed); }))
           + '\n';
    out += "# HELP taxicore_feed_clients Live feed WebSocket clients open now (not in taxicore_open_connections).\n"
           "# TYPE taxicore_feed_clients gauge\ntaxicore_feed_clients "
           + QByteArray::number(sumSlots(fleet, [&](const WorkerSlot &s) { return s.feedClients.load(relaxed); }))
           + '\n';
    out += "# HELP taxicore_requests_in_flight Requests being handled now.\n"
           "# TYPE taxicore_requests_in_flight gauge\ntaxicore_requests_in_flight "
           + QByteArray::number(sumSlots(fleet, [&](const WorkerSlot &s) { return s.inFlight.load(relaxed); })) + '\n';
    out += "# HELP taxicore_mode The execution model serving now.\n# TYPE taxicore_mode gauge\n"
           "taxicore_mode{mode=\""
           + mode + "\"} 1\n";
    out += "# HELP taxicore_cars Cars in the fleet.\n# TYPE taxicore_cars gauge\ntaxicore_cars "
           + QByteArray::number(fleet.carCount()) + '\n';
    out += "# HELP taxicore_ledger_records_committed_total Ledger records (bookings, moves, trips, events) "
           "committed.\n# TYPE taxicore_ledger_records_committed_total counter\n"
           "taxicore_ledger_records_committed_total "
           + QByteArray::number(sumSlots(fleet, [&](const WorkerSlot &s) { return s.ledgerCommitted.load(relaxed); }))
           + '\n';
    out += "# HELP taxicore_ledger_records_failed_total Ledger records refused: not written, their requests "
           "answered 503.\n# TYPE taxicore_ledger_records_failed_total counter\n"
           "taxicore_ledger_records_failed_total "
           + QByteArray::number(sumSlots(fleet, [&](const WorkerSlot &s) { return s.ledgerFailed.load(relaxed); }))
           + '\n';
    out += "# HELP taxicore_ledger_failing Serving processes whose last ledger transaction failed.\n"
           "# TYPE taxicore_ledger_failing gauge\ntaxicore_ledger_failing "
           + QByteArray::number(failingLedgers(fleet)) + '\n';
    return out;
}

} // namespace taxicore
