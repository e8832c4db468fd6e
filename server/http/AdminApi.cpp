#include "http/AdminApi.h"

#include "dispatch/BookingReassign.h"
#include "fleet/FleetStore.h"
#include "wire/ApiError.h"
#include "http/JsonViews.h"
#include "http/OperatorAccess.h"
#include "wire/RequestInput.h"
#include "http/RouteTable.h"
#include "ledger/LedgerErrors.h"
#include "control/EventLog.h"
#include "metrics/ProcessStats.h"
#include "region/WorkerProtocol.h"
#include "control/RuntimeMailbox.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QTimer>
#include <cmath>
#include <csignal>
#include <map>
#include <mutex>
#include <unistd.h>

namespace taxicore {

namespace {

constexpr int kEventsShown = 100;
// Time for a worker's own answer to reach the client before it kills itself.
constexpr int kSelfKillDelayMs = 200;

QJsonObject runtimeJson(const FleetStore &fleet)
{
    QJsonObject o = RuntimeMailbox(fleet.control()).current().toJson();
    o.insert(QStringLiteral("generation"), qint64(fleet.control().generation.load(std::memory_order_relaxed)));
    return o;
}

QJsonObject workerJson(int index, const WorkerSlot &slot)
{
    constexpr auto relaxed = std::memory_order_relaxed;
    const int pid = slot.pid.load(relaxed);
    const WorkerSlotState state = slot.state.load(relaxed);
    const int64_t now = clock::monotonicMs();
    const ProcessStats stats = sampleProcess(pid);
    return {
        {QStringLiteral("index"), index},
        {QStringLiteral("pid"), pid},
        {QStringLiteral("state"), QLatin1StringView(workerSlotStateName(state))},
        {QStringLiteral("uptime_s"), double(now - slot.startedMs.load(relaxed)) / 1000.0},
        {QStringLiteral("restarts"), qint64(slot.restarts.load(relaxed))},
        {QStringLiteral("requests"), qint64(slot.requests.load(relaxed))},
        {QStringLiteral("in_flight"), qint64(slot.inFlight.load(relaxed))},
        {QStringLiteral("open_connections"), qint64(slot.openConnections.load(relaxed))},
        {QStringLiteral("cpu_percent"), stats.cpuPercent},
        {QStringLiteral("rss_kb"), qint64(stats.rssKb)},
        {QStringLiteral("heartbeat_age_ms"), qint64(now - slot.heartbeatMs.load(relaxed))},
        {QStringLiteral("loop_lag_ms"), double(slot.loopLagUs.load(relaxed)) / 1000.0},
    };
}

std::mutex s_clusterViewsMutex;
std::map<const FleetStore *, ClusterView> s_clusterViews;

// GET /admin/v1/cluster: the nodes this server knows of (itself alone outside a cluster).
ApiResponse clusterNodes(const ApiRequest &request, const FleetStore &fleet)
{
    requireOperator(request);
    ClusterView view;
    {
        std::lock_guard lock(s_clusterViewsMutex);
        const auto found = s_clusterViews.find(&fleet);
        if (found != s_clusterViews.end())
            view = found->second;
    }
    const QJsonObject nodes = view ? view() : QJsonObject{};
    if (nodes.isEmpty()) // a worker process starting, or a server stopping
        throwApiError(503, "cluster_view_unavailable",
                      QStringLiteral("this server process does not know the node list (yet); ask again shortly"));
    return jsonResponse(nodes);
}

// A reassign the ledger did not record. A refusal is its verdict on this move, decided by
// another node first (a cluster's database: that node's booking took the car, or ended this
// booking): a conflict, nothing moved. Anything else is a failing ledger. Operators read the
// ledger's own words (its location included); riders never see this route.
ApiResponse reassignNotRecorded(const FleetStore::Reassignment &asked, const QString &error)
{
    const auto refusedFor = [&error](const char *refusal) { return error.startsWith(QLatin1StringView(refusal)); };
    const uint64_t id = asked.booking.id;
    if (refusedFor(kLedgerCarTaken))
        return errorResponse(409, "car_not_available",
                             QStringLiteral("car %1 is taken by a booking of another node; booking %2 keeps car %3")
                                 .arg(asked.car.id)
                                 .arg(id)
                                 .arg(asked.previousCarId),
                             {{QStringLiteral("ledger"), error}});
    if (refusedFor(kLedgerBookingMoved))
        return errorResponse(409, "booking_moved",
                             QStringLiteral("another node moved booking %1 meanwhile; nothing moved").arg(id),
                             {{QStringLiteral("ledger"), error}});
    if (refusedFor(kLedgerBookingUnknown))
        return errorResponse(409, "booking_not_recorded",
                             QStringLiteral("booking %1 has no record in the ledger (it was never acknowledged); "
                                            "nothing moved")
                                 .arg(id),
                             {{QStringLiteral("ledger"), error}});
    return errorResponse(503, "ledger_unavailable",
                         QStringLiteral("the reassignment could not be recorded durably: %1").arg(error));
}

// POST /admin/v1/bookings/{id}/reassign {"car_id"?}: answered after the ledger has the move.
ApiResponse reassignBooking(const ApiRequest &request, FleetStore &fleet, const BookingReassign &reassign)
{
    requireOperator(request);
    const auto id = pathId(request, 0, "booking");
    int carId = 0; // the best available car by road
    if (!request.body.trimmed().isEmpty()) {
        const QJsonObject body = readJsonObject(request);
        const QJsonValue car = body.value(QStringLiteral("car_id"));
        if (!car.isUndefined() && !car.isNull()) {
            const double wanted = jsonNumber(body, "car_id", 1, kMaxCars);
            if (wanted != std::floor(wanted))
                throwApiError(400, "invalid_car_id", QStringLiteral("car_id must be a whole number"),
                              {{QStringLiteral("field"), QStringLiteral("car_id")}});
            carId = int(wanted);
        }
    }
    if (!fleet.booking(id))
        throwApiError(404, "booking_not_found", QStringLiteral("there is no booking %1").arg(id));
    if (carId > fleet.carCount())
        throwApiError(404, "car_not_found", QStringLiteral("there is no car %1").arg(carId));

    const auto reply = request.reply;
    const auto move =
        reassign(id, carId, [reply](const FleetStore::Reassignment &done, bool committed, const QString &error) {
            if (!committed) {
                (*reply)(reassignNotRecorded(done, error));
                return;
            }
            QJsonObject out = bookingJson(done.booking);
            out.insert(QStringLiteral("car"), carJson(done.car));
            out.insert(QStringLiteral("previous_car_id"), done.previousCarId);
            (*reply)(jsonResponse(out));
        });
    using R = FleetStore::ReassignResult;
    const QString state = QString(bookingStateName(move.booking.state));
    switch (move.result) {
    case R::Done:
        return deferredResponse();
    case R::NotFound:
        throwApiError(404, "booking_not_found", QStringLiteral("there is no booking %1").arg(id));
    case R::IllegalState:
        throwApiError(409, "illegal_transition",
                      QStringLiteral("booking %1 is %2; reassign needs assigned or arriving").arg(id).arg(state),
                      {{QStringLiteral("state"), state}});
    case R::MoveInProgress:
        throwApiError(
            409, "move_in_progress",
            QStringLiteral("booking %1 is %2 and another move of it awaits the ledger; try again").arg(id).arg(state),
            {{QStringLiteral("state"), state}});
    case R::CarUnavailable:
        break;
    }
    throwApiError(409, carId ? "car_not_available" : "no_car_available",
                  carId ? QStringLiteral("car %1 is not available").arg(carId)
                        : QStringLiteral("no other car is available near the pickup; try again shortly"));
}

} // namespace

void setClusterView(const FleetStore &fleet, ClusterView view)
{
    std::lock_guard lock(s_clusterViewsMutex);
    if (view)
        s_clusterViews[&fleet] = std::move(view);
    else
        s_clusterViews.erase(&fleet);
}

void registerAdminRoutes(RouteTable &router, FleetStore &fleet, const TripEstimator &estimator, Ledger *ledger)
{
    router.add(HttpMethod::Get, "/admin/v1/cluster",
               [&fleet](const ApiRequest &request) { return clusterNodes(request, fleet); });
    router.add(HttpMethod::Post, "/admin/v1/bookings/{id}/reassign",
               [&fleet, reassign = BookingReassign(fleet, estimator, ledger)](const ApiRequest &request) {
                   return reassignBooking(request, fleet, reassign);
               });
    router.add(HttpMethod::Get, "/admin/v1/runtime", [&fleet](const ApiRequest &request) {
        requireOperator(request);
        return jsonResponse(runtimeJson(fleet));
    });
    router.add(HttpMethod::Put, "/admin/v1/runtime", [&fleet](const ApiRequest &request) {
        requireOperator(request);
        RuntimeMailbox mailbox(fleet.control());
        QString error;
        const auto wanted = mailbox.current().mergedWith(readJsonObject(request), error);
        if (!wanted)
            throwApiError(400, "invalid_runtime", error);
        const RuntimeMailbox::Answer answer = mailbox.ask(*wanted, kRuntimeApplyTimeoutMs);
        if (answer.busy)
            throwApiError(409, "switch_in_progress",
                          QStringLiteral("another runtime change is being applied; ask again when it is done"),
                          {{QStringLiteral("runtime"), runtimeJson(fleet)}});
        if (!answer.answered)
            throwApiError(503, "primary_unavailable",
                          QStringLiteral("the primary did not answer within %1 s").arg(kRuntimeApplyTimeoutMs / 1000));
        if (!answer.error.isEmpty())
            throwApiError(409, "runtime_refused", answer.error);
        // What this request applied, not what is in force by now (another change may follow).
        QJsonObject applied = answer.applied.toJson();
        applied.insert(QStringLiteral("generation"), qint64(answer.generation));
        return jsonResponse(applied);
    });
    router.add(HttpMethod::Get, "/admin/v1/workers", [&fleet](const ApiRequest &request) {
        requireOperator(request);
        QJsonArray workers;
        for (int i = 1; i < kMaxWorkers; ++i) {
            const WorkerSlot &slot = fleet.workerSlot(i);
            if (isLiveWorkerSlotState(slot.state.load(std::memory_order_relaxed)))
                workers.append(workerJson(i, slot));
        }
        return jsonResponse(
            {{QStringLiteral("primary"), workerJson(0, fleet.workerSlot(0))}, {QStringLiteral("workers"), workers}});
    });
    router.add(HttpMethod::Post, "/admin/v1/workers/{index}/kill", [&fleet](const ApiRequest &request) {
        requireOperator(request);
        const auto index = pathId(request, 0, "worker");
        const WorkerSlot *slot = index < uint64_t(kMaxWorkers) ? &fleet.workerSlot(int(index)) : nullptr;
        const int pid = slot ? slot->pid.load(std::memory_order_relaxed) : 0;
        if (pid <= 0 || !isLiveWorkerSlotState(slot->state.load(std::memory_order_relaxed)))
            throwApiError(404, "worker_not_found", QStringLiteral("there is no running worker %1").arg(index));
        EventLog(fleet.control())
            .append("kill", QStringLiteral("operator killed worker %1 (pid %2)").arg(index).arg(pid));
        if (pid == ::getpid()) {
            // The worker serving this request is the one to kill: answer first, die a moment later.
            QMetaObject::invokeMethod(
                qApp, [] { QTimer::singleShot(kSelfKillDelayMs, [] { ::kill(::getpid(), SIGKILL); }); },
                Qt::QueuedConnection);
        } else {
            ::kill(pid, SIGKILL);
        }
        return jsonResponse({{QStringLiteral("killed"), pid}, {QStringLiteral("index"), qint64(index)}}, 202);
    });
    router.add(HttpMethod::Get, "/admin/v1/events", [&fleet](const ApiRequest &request) {
        requireOperator(request);
        return jsonResponse({{QStringLiteral("events"), EventLog(fleet.control()).newest(kEventsShown)}});
    });
}

} // namespace taxicore
