#pragma once

#include "wire/HttpTypes.h"

namespace taxicore {

// Serialises a response exactly as the client needs it: the client's HTTP version (1.0 gets
// 1.0), an explicit Connection header, and no body for HEAD (Content-Length still the GET's).
QByteArray serializeResponse(const ApiResponse &response, bool http10, bool keepAlive, bool headOnly);
// A keep-alive answer serializeResponse wrote, turned into one that says Connection: close (the
// connection turned out to close after it: a drain). One that already says close is left alone.
void markClosing(QByteArray &serialized);
QByteArray statusText(int status);

} // namespace taxicore
