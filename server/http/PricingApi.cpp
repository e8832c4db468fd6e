#include "http/PricingApi.h"

#include "fleet/FleetStore.h"
#include "wire/ApiError.h"
#include "http/OperatorAccess.h"
#include "wire/RequestInput.h"
#include "http/RouteTable.h"
#include "pricing/PricingBoard.h"
#include "pricing/TariffJson.h"

#include <QJsonArray>
#include <cmath>

namespace taxicore {

namespace {

double twoDecimals(double value)
{
    return std::round(value * 100.0) / 100.0;
}

QJsonObject gridJson(const PricingBoard &pricing)
{
    const SurgeGrid grid = pricing.grid();
    QJsonArray cells;
    for (const double surge : pricing.surgeCells())
        cells.append(twoDecimals(surge));
    return {
        {QStringLiteral("rows"), grid.rows},
        {QStringLiteral("cols"), grid.cols},
        {QStringLiteral("south"), grid.south},
        {QStringLiteral("west"), grid.west},
        {QStringLiteral("cell_lat_deg"), grid.cellLatDeg},
        {QStringLiteral("cell_lng_deg"), grid.cellLngDeg},
        {QStringLiteral("updated_ms"), qint64(pricing.surgeUpdatedMs())},
        {QStringLiteral("surge"), cells},
    };
}

QJsonObject demandJson(const PricingBoard &pricing)
{
    return {{QStringLiteral("rides_per_minute"), pricing.demandRate()}};
}

} // namespace

void registerSurgeRoutes(RouteTable &router, FleetStore &fleet)
{
    router.add(HttpMethod::Get, "/api/v1/surge", [&fleet](const ApiRequest &request) {
        const PricingBoard pricing(fleet.pricing());
        if (!request.query.hasQueryItem(QStringLiteral("lat")) && !request.query.hasQueryItem(QStringLiteral("lng")))
            return jsonResponse(gridJson(pricing));
        const LatLng at = queryPoint(request, "");
        const int cell = pricing.grid().cellOf(at);
        return jsonResponse({
            {QStringLiteral("lat"), at.lat},
            {QStringLiteral("lng"), at.lng},
            {QStringLiteral("cell"), cell},
            {QStringLiteral("surge"), pricing.surgeAt(at)},
        });
    });
}

void registerPricingAdminRoutes(RouteTable &router, FleetStore &fleet)
{
    router.add(HttpMethod::Get, "/admin/v1/tariff", [&fleet](const ApiRequest &request) {
        requireOperator(request);
        return jsonResponse(tariffJson(PricingBoard(fleet.pricing()).tariff()));
    });
    router.add(HttpMethod::Put, "/admin/v1/tariff", [&fleet](const ApiRequest &request) {
        requireOperator(request);
        PricingBoard pricing(fleet.pricing());
        // Fields left out keep their value in force: a PUT may change just one.
        const TariffParse parsed = tariffFromJson(readJsonObject(request), pricing.tariff());
        if (!parsed.tariff)
            throwApiError(400, "invalid_tariff", parsed.error);
        pricing.setTariff(*parsed.tariff);
        return jsonResponse(tariffJson(*parsed.tariff));
    });
    router.add(HttpMethod::Get, "/admin/v1/demand", [&fleet](const ApiRequest &request) {
        requireOperator(request);
        return jsonResponse(demandJson(PricingBoard(fleet.pricing())));
    });
    router.add(HttpMethod::Put, "/admin/v1/demand", [&fleet](const ApiRequest &request) {
        requireOperator(request);
        const QJsonObject body = readJsonObject(request);
        const double rate = jsonNumber(body, "rides_per_minute", 0, PricingBoard::kMaxDemandRatePerMinute);
        PricingBoard pricing(fleet.pricing());
        pricing.setDemandRate(rate);
        return jsonResponse(demandJson(pricing));
    });
}

} // namespace taxicore
