#include "wire/ApiError.h"

#include <QJsonDocument>

namespace taxicore {

ApiResponse errorResponse(int status, const char *code, const QString &message, const QJsonObject &extra)
{
    QJsonObject body = extra;
    body.insert(QStringLiteral("error"), QLatin1StringView(code));
    body.insert(QStringLiteral("message"), message);
    return jsonResponse(body, status);
}

ApiResponse jsonResponse(const QJsonObject &object, int status)
{
    ApiResponse r;
    r.status = status;
    r.body = QJsonDocument(object).toJson(QJsonDocument::Compact);
    return r;
}

ApiResponse deferredResponse()
{
    ApiResponse r;
    r.status = ApiResponse::kDeferred;
    return r;
}

ApiResponse textResponse(const QByteArray &text, int status)
{
    ApiResponse r;
    r.status = status;
    r.contentType = QByteArrayLiteral("text/plain; charset=utf-8");
    r.body = text;
    return r;
}

} // namespace taxicore
