#include "wire/PlainRequest.h"

#include "wire/AsciiText.h"

#include <cstring>

namespace taxicore {

namespace {

// RFC 3986 pchar without pct-encoded, plus '/': the path bytes Qt's URL parser keeps as they are.
struct PathTable {
    bool plain[256] = {};
    constexpr PathTable()
    {
        for (int c = 0; c < 256; ++c)
            plain[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        for (const char *p = "-._~!$&'()*+,;=:@/"; *p != '\0'; ++p)
            plain[static_cast<unsigned char>(*p)] = true;
    }
};
constexpr PathTable kPath;

bool containsUpgrade(QByteArrayView value)
{
    for (qsizetype i = 0; i + 7 <= value.size(); ++i)
        if (equalsIgnoringAsciiCase(value.sliced(i, 7), "upgrade"))
            return true;
    return false;
}

HttpMethod methodOf(QByteArrayView name)
{
    // The names Qt's parser knows, case-sensitively as it reads them; CONNECT and any other
    // method are Other here as they are after Qt's parser (HttpService's toMethod).
    if (name == "GET")
        return HttpMethod::Get;
    if (name == "HEAD")
        return HttpMethod::Head;
    if (name == "POST")
        return HttpMethod::Post;
    if (name == "PUT")
        return HttpMethod::Put;
    if (name == "DELETE")
        return HttpMethod::Delete;
    if (name == "PATCH")
        return HttpMethod::Patch;
    if (name == "OPTIONS")
        return HttpMethod::Options;
    return HttpMethod::Other;
}

// Sets `field` to `value` unless it was set before (a repeated field Qt would join: left to Qt).
bool setOnce(QByteArrayView &field, QByteArrayView value)
{
    if (field.data() != nullptr)
        return false;
    // Not null even when empty, so "present" and "absent" stay apart.
    field = value.isEmpty() ? QByteArrayView("", 0) : value;
    return true;
}

// Where the line starting at `from` ends (its CR): -1 when its LF has not come, -2 for a bare LF. The framing check
// passed only CRLF line ends, so the LF alone finds it (memchr: the cheapest search there is).
qsizetype lineEndAt(QByteArrayView data, qsizetype from)
{
    if (from >= data.size())
        return -1;
    const void *lf = std::memchr(data.data() + from, '\n', std::size_t(data.size() - from));
    if (lf == nullptr)
        return -1;
    const qsizetype at = static_cast<const char *>(lf) - data.data();
    return at > from && data[at - 1] == '\r' ? at - 1 : -2;
}

} // namespace

qsizetype readPlainRequest(QByteArrayView data, PlainRequest &request)
{
    request = PlainRequest{};
    // The request line: METHOD SP TARGET SP HTTP/1.x CRLF, as the framing check passed it.
    const qsizetype lineEnd = lineEndAt(data, 0);
    if (lineEnd <= 0)
        return 0; // not whole, or a blank line first (Qt skips it)
    const QByteArrayView line = data.first(lineEnd);
    const qsizetype methodEnd = line.indexOf(' ');
    const qsizetype targetEnd = line.lastIndexOf(' ');
    if (methodEnd <= 0 || targetEnd <= methodEnd + 1)
        return 0;
    request.method = methodOf(line.first(methodEnd));
    request.target = line.sliced(methodEnd + 1, targetEnd - methodEnd - 1);
    if (request.target[0] != '/' || (request.target.size() > 1 && request.target[1] == '/'))
        return 0; // another form of target, or one Qt reads as an authority
    qsizetype pathEnd = 0;
    while (pathEnd < request.target.size() && request.target[pathEnd] != '?') {
        if (!kPath.plain[static_cast<unsigned char>(request.target[pathEnd])])
            return 0;
        ++pathEnd;
    }
    request.path = request.target.first(pathEnd);
    request.hasQuery = pathEnd < request.target.size();
    if (request.hasQuery && request.target.indexOf('#') >= 0)
        return 0;

    // The fields, up to the empty line.
    long long contentLength = 0;
    qsizetype pos = lineEnd + 2;
    for (;;) {
        const qsizetype end = lineEndAt(data, pos);
        if (end < 0)
            return 0; // not whole (or a bare LF, which the check never passes)
        if (end == pos) {
            pos += 2;
            break;
        }
        const QByteArrayView field = data.sliced(pos, end - pos);
        pos = end + 2;
        const qsizetype colon = field.indexOf(':');
        if (colon <= 0)
            return 0;
        const QByteArrayView name = field.first(colon);
        const QByteArrayView value = trimmedOfOptionalWhitespace(field.sliced(colon + 1));
        bool ok = true;
        switch (name.size()) {
        case 4:
            if (equalsIgnoringAsciiCase(name, "host"))
                ok = setOnce(request.host, value);
            break;
        case 6:
            if (equalsIgnoringAsciiCase(name, "origin"))
                ok = setOnce(request.origin, value);
            else
                ok = !equalsIgnoringAsciiCase(name, "expect");
            break;
        case 7:
            ok = !equalsIgnoringAsciiCase(name, "upgrade");
            break;
        case 10:
            ok = !equalsIgnoringAsciiCase(name, "connection") || !containsUpgrade(value);
            break;
        case 13:
            if (equalsIgnoringAsciiCase(name, "if-none-match"))
                ok = setOnce(request.ifNoneMatch, value);
            else if (equalsIgnoringAsciiCase(name, "authorization"))
                ok = setOnce(request.authorization, value);
            break;
        case 14:
            if (equalsIgnoringAsciiCase(name, "content-length")) {
                // Digits only (the framing check refused anything else, and any other length).
                contentLength = 0;
                for (const char c : value) {
                    if (c < '0' || c > '9' || contentLength > (1LL << 40))
                        return 0;
                    contentLength = contentLength * 10 + (c - '0');
                }
            }
            break;
        case 15:
            if (equalsIgnoringAsciiCase(name, "accept-encoding"))
                ok = setOnce(request.acceptEncoding, value);
            else if (equalsIgnoringAsciiCase(name, "x-forwarded-for"))
                ok = setOnce(request.forwardedFor, value);
            else if (equalsIgnoringAsciiCase(name, "idempotency-key"))
                ok = setOnce(request.idempotencyKey, value);
            break;
        case 17:
            ok = !equalsIgnoringAsciiCase(name, "transfer-encoding");
            break;
        default:
            break;
        }
        if (!ok)
            return 0;
    }
    if (contentLength > data.size() - pos)
        return 0;
    request.body = data.sliced(pos, qsizetype(contentLength));
    return pos + qsizetype(contentLength);
}

} // namespace taxicore
