#include "wire/GzipBody.h"

#include <zlib.h>

namespace taxicore {

QByteArray gzipCompress(const QByteArray &data)
{
    z_stream stream{};
    constexpr int kGzipWindowBits = 15 + 16; // +16: gzip header instead of zlib's
    if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, kGzipWindowBits, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return {};
    QByteArray out(qsizetype(deflateBound(&stream, uLong(data.size()))), Qt::Uninitialized);
    stream.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(data.constData()));
    stream.avail_in = uInt(data.size());
    stream.next_out = reinterpret_cast<Bytef *>(out.data());
    stream.avail_out = uInt(out.size());
    const int result = deflate(&stream, Z_FINISH);
    deflateEnd(&stream);
    if (result != Z_STREAM_END)
        return {};
    out.resize(qsizetype(stream.total_out));
    return out;
}

} // namespace taxicore
