#pragma once

#include <QByteArray>

namespace taxicore {

// gzip (RFC 1952) of `data`, for Content-Encoding: gzip. Empty on failure.
QByteArray gzipCompress(const QByteArray &data);

} // namespace taxicore
