#include "http/EventsApi.h"

#include "fleet/FleetStore.h"
#include "wire/ApiError.h"
#include "http/OperatorAccess.h"
#include "wire/RequestInput.h"
#include "http/RouteTable.h"
#include "ledger/Ledger.h"

#include <QJsonDocument>
#include <QRegularExpression>

namespace taxicore {

namespace {

// Kinds are short identifiers so reports can group by them; details stay small enough that the
// events table remains a log, not a blob store.
constexpr int kMaxDetailBytes = 16 * 1024;

QString readKind(const QJsonObject &body)
{
    const QJsonValue kind = body.value(QStringLiteral("kind"));
    static const QRegularExpression identifier(QStringLiteral("^[a-z][a-z0-9_]{0,31}$"));
    if (!kind.isString() || !identifier.match(kind.toString()).hasMatch())
        throwApiError(400, "bad_kind",
                      QStringLiteral("kind must be a lower-case identifier of 1 to 32 characters (a-z, 0-9, _)"),
                      {{QStringLiteral("field"), QStringLiteral("kind")}});
    return kind.toString();
}

QJsonObject readDetail(const QJsonObject &body)
{
    const QJsonValue detail = body.value(QStringLiteral("detail"));
    if (detail.isUndefined())
        return {};
    if (!detail.isObject())
        throwApiError(400, "bad_detail", QStringLiteral("detail must be a JSON object"),
                      {{QStringLiteral("field"), QStringLiteral("detail")}});
    if (QJsonDocument(detail.toObject()).toJson(QJsonDocument::Compact).size() > kMaxDetailBytes)
        throwApiError(413, "detail_too_large",
                      QStringLiteral("detail must be at most %1 bytes of JSON").arg(kMaxDetailBytes),
                      {{QStringLiteral("field"), QStringLiteral("detail")}});
    return detail.toObject();
}

} // namespace

void registerEventRoutes(RouteTable &router, Ledger &ledger)
{
    router.add(HttpMethod::Post, "/admin/v1/events", [&ledger](const ApiRequest &request) {
        requireOperator(request);
        const QJsonObject body = readJsonObject(request);
        EventRecord event{readKind(body), readDetail(body), clock::wallMs()};
        const ApiResponse stored = jsonResponse({{QStringLiteral("kind"), event.kind},
                                                 {QStringLiteral("at_ms"), event.atMs},
                                                 {QStringLiteral("detail"), event.detail}},
                                                201);
        ledger.append(std::move(event), [reply = request.reply, stored](bool committed, const QString &error) {
            (*reply)(committed ? stored
                               : errorResponse(503, "ledger_unavailable",
                                               QStringLiteral("the event could not be recorded: %1").arg(error)));
        });
        return deferredResponse();
    });
}

} // namespace taxicore
