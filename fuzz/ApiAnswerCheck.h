#pragma once
// What the HTTP body fuzz targets assert about a refusal.

#include "FuzzChecks.h"
#include "wire/HttpTypes.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace taxicore::fuzz {

// Bad input must be refused as docs/reference/http-api.md promises: a 4xx with {"error": code, "message": text}.
inline void checkClientError(const ApiResponse &response)
{
    TAXICORE_FUZZ_CHECK(response.status >= 400 && response.status < 500);
    const QJsonObject body = QJsonDocument::fromJson(response.body).object();
    TAXICORE_FUZZ_CHECK(!body.value(QStringLiteral("error")).toString().isEmpty());
    TAXICORE_FUZZ_CHECK(!body.value(QStringLiteral("message")).toString().isEmpty());
}

} // namespace taxicore::fuzz
