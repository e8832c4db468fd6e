#pragma once

#include <QByteArrayView>

namespace taxicore {

// Whether an answer may be sent gzip-encoded to a client whose Accept-Encoding is `field`
// (RFC 9110 §12.5.3): yes when it lists "gzip" (or its alias "x-gzip") with a weight above zero,
// or, naming neither, "*" with a weight above zero. Names are case-insensitive; an entry whose
// weight cannot be read counts as not given. An empty field means no: identity is always fine.
bool acceptsGzip(QByteArrayView field);

// Whether If-None-Match `field` matches the current representation's entity tag `etag` (a quoted
// strong tag): "*", or a list naming it, weak or strong (§13.1.2 compares weakly). A tag is
// matched whole, never as a part of a longer one.
bool matchesEtag(QByteArrayView field, QByteArrayView etag);

} // namespace taxicore
