#pragma once

#include "wire/HttpTypes.h"

namespace taxicore {

// Serialises a response exactly as the client needs it: the client's HTTP version (1.0 gets
// 1.0), an explicit Connection header, and no body for HEAD (Content-Length still the GET's).
QByteArray serializeResponse(const ApiResponse &response, bool http10, bool keepAlive, bool headOnly);
QByteArray statusText(int status);

} // namespace taxicore
