#pragma once

#include "HttpClient.h"

namespace taxicore::test {

// Many requests at once, each on its own connection, all driven by one event loop: open every
// socket, send every request, then collect every response, within one overall timeout.
// Responses come back in the order of `requests`; one that did not arrive has complete == false.
QList<HttpResponse> sendConcurrently(const QString &host, quint16 port, const QList<QByteArray> &requests,
                                     int timeoutMs);

// `riders` POST /api/v1/bookings requests (rider-0, rider-1, ...) with pickups spread over the
// inner city, so riders compete for different nearest cars too.
QList<QByteArray> bookingBurst(int riders);

} // namespace taxicore::test
