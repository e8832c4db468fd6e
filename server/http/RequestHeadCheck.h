#pragma once

#include "http/ConnectionLimits.h"
#include "http/ConnectionState.h"

#include <QByteArray>
#include <QString>

namespace taxicore {

// Why the guard refuses a request head: the status, a stable error code and a message.
struct HeadVerdict {
    int status = 0; // 0: nothing wrong so far
    const char *code = "";
    QString message;
    bool refused() const { return status != 0; }
};

// Reads the complete lines of a request head that arrived so far and records what the guard
// needs in `state` (HTTP version, Connection, Content-Length, chunked, Expect, sizes).
// QHttpServer consumes whole lines, so each call sees the head from where the previous one
// stopped. Pure (no socket, no clock: `nowMs` stamps the head's start) so it can be fuzzed.
HeadVerdict inspectRequestHead(const QByteArray &bytes, const ConnectionLimits &limits,
                               ConnectionState &state, long long nowMs);

} // namespace taxicore
