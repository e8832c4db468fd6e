#pragma once

#include "wire/HttpTypes.h"

#include <QByteArrayView>

namespace taxicore {

// A whole request read straight from bytes the framing check (RequestFraming) already passed: the
// connection guard's direct path past Qt's parser, which reads a head one byte at a time into
// copies (docs/QT64.md, "How Qt 6.4's parser reads a connection"). Views into the caller's
// bytes: nothing is copied or allocated.
struct PlainRequest {
    HttpMethod method = HttpMethod::Other;
    QByteArrayView target;
    // The target up to its '?': exactly what Qt's url.path(QUrl::FullyDecoded) gives for it
    // (only targets whose path holds no '%' and no byte Qt's URL parser would rewrite are plain).
    QByteArrayView path;
    bool hasQuery = false;
    // The fields the handlers read, without surrounding whitespace; null when absent.
    QByteArrayView acceptEncoding;
    QByteArrayView ifNoneMatch;
    QByteArrayView authorization;
    QByteArrayView idempotencyKey;
    QByteArrayView forwardedFor;
    QByteArrayView host;
    QByteArrayView origin;
    QByteArrayView body;
};

// Reads the request at the front of `data`, whose head and body the framing check passed. Returns
// its size in bytes, or 0 when it is not whole in `data` or is to be read by Qt's parser instead,
// so that a request is never read differently from how Qt reads it: a target that is not a plain
// absolute path (origin form without '%', '#', "//" or bytes outside RFC 3986 pchar), an upgrade,
// Transfer-Encoding, Expect, blank lines before it, or a repeated field of those read above.
qsizetype readPlainRequest(QByteArrayView data, PlainRequest &request);

} // namespace taxicore
