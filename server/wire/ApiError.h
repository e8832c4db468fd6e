#pragma once

#include "wire/HttpTypes.h"

#include <QJsonObject>
#include <QString>

namespace taxicore {

// {"error": code, "message": human text} with the given status; `extra` fields are merged in.
ApiResponse errorResponse(int status, const char *code, const QString &message, const QJsonObject &extra = {});
ApiResponse jsonResponse(const QJsonObject &object, int status = 200);
ApiResponse textResponse(const QByteArray &text, int status = 200);
// Returned by a handler that will answer later through ApiRequest::reply.
ApiResponse deferredResponse();

} // namespace taxicore
