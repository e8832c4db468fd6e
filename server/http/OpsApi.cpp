#include "http/OpsApi.h"

#include "fleet/FleetStore.h"
#include "ledger/Ledger.h"
#include "wire/ApiError.h"
#include "http/RouteTable.h"
#include "metrics/PrometheusText.h"

#include <QFile>
#include <QJsonObject>

namespace taxicore {

namespace {

QByteArray loadOpenApi()
{
    QFile file(QStringLiteral(":/taxicore/openapi.json"));
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

} // namespace

void registerOpsRoutes(RouteTable &router, const FleetStore &fleet, const Ledger *ledger, int slot,
                       std::function<QByteArray()> mode)
{
    // 200 either way: a node whose ledger fails still serves the live view, and every node of a
    // cluster shares one database, so a balancer taking "degraded" nodes out would take out all.
    router.add(HttpMethod::Get, "/healthz", [&fleet, ledger, slot, mode](const ApiRequest &) {
        const int64_t started = fleet.control().startedMs.load(std::memory_order_relaxed);
        // This process's ledger now, and every other serving process's as last published.
        const bool ledgerFailing = ledger && (ledger->stats().failing || failingLedgers(fleet, slot) > 0);
        return jsonResponse({
            {QStringLiteral("status"), ledgerFailing ? QStringLiteral("degraded") : QStringLiteral("ok")},
            {QStringLiteral("ledger"), !ledger         ? QStringLiteral("none")
                                       : ledgerFailing ? QStringLiteral("failing")
                                                       : QStringLiteral("ok")},
            {QStringLiteral("version"), QStringLiteral(TAXICORE_VERSION)},
            {QStringLiteral("mode"), QString::fromLatin1(mode())},
            {QStringLiteral("uptime_s"), double(clock::monotonicMs() - started) / 1000.0},
            {QStringLiteral("cars"), fleet.carCount()},
        });
    });
    router.add(HttpMethod::Get, "/metrics", [&fleet, &router, mode](const ApiRequest &) {
        QList<QByteArray> names{QByteArrayLiteral("unmatched")};
        for (const RouteTable::Route &route : router.routes())
            names.append(methodName(route.method) + ' ' + route.pattern);
        ApiResponse r = textResponse(renderPrometheus(fleet, names, mode()));
        r.contentType = QByteArrayLiteral("text/plain; version=0.0.4; charset=utf-8");
        return r;
    });
    static const QByteArray openApi = loadOpenApi();
    router.add(HttpMethod::Get, "/api/v1/openapi.json", [](const ApiRequest &) {
        ApiResponse r;
        r.body = openApi;
        return r;
    });
}

} // namespace taxicore
