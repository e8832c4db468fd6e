#include "wire/RequestFraming.h"

#include <algorithm>
#include <climits>
#include <cstring>

namespace taxicore {

namespace {

// Qt's header parser (QHttpHeaderParser) refuses a field line longer than this or more fields
// than that, and then drops every header, Content-Length included, while Qt still dispatches the
// request: its body would be parsed as the next request. The check refuses them first (431).
constexpr int kQtMaxFieldLineBytes = 8 * 1024;
constexpr int kQtMaxHeaderFields = 100;
// Empty lines tolerated before a request line (RFC 9112 §2.2 asks for at least one).
constexpr int kMaxBlankLines = 4;
// A chunk-size line with its extensions.
constexpr int kMaxChunkLineBytes = 1024;

constexpr long long kLengthCeiling = LLONG_MAX / 16; // Content-Length digits saturate here

// tchar of RFC 9110 §5.6.2: what a method and a field name are made of.
constexpr bool isTokenChar(unsigned char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    for (const char *p = "!#$%&'*+-.^_`|~"; *p != '\0'; ++p)
        if (c == static_cast<unsigned char>(*p))
            return true;
    return false;
}

struct CharTable {
    bool token[256] = {};
    bool target[256] = {};
    bool fieldValue[256] = {};
    constexpr CharTable()
    {
        for (int c = 0; c < 256; ++c) {
            token[c] = isTokenChar(static_cast<unsigned char>(c));
            // Visible ASCII and, leniently, bytes of UTF-8 (the target is percent-decoded later).
            target[c] = (c > 0x20 && c < 0x7f) || c >= 0x80;
            // field-vchar, SP and HTAB (RFC 9110 §5.5): no control byte but HTAB.
            fieldValue[c] = target[c] || c == ' ' || c == '\t';
        }
    }
};
constexpr CharTable kChars;

constexpr bool isSpace(unsigned char c)
{
    return c == ' ' || c == '\t';
}

// A byte of uri-host [":" port] (RFC 3986 §3.2.2): unreserved, sub-delims, '%' of pct-encoded,
// ':' and the brackets of an IPv6 literal.
bool isHostByte(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
           || (c != 0 && std::strchr("-._~!$&'()*+,;=%:[]", c) != nullptr);
}

int hexValue(unsigned char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

char lower(unsigned char c)
{
    return char(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
}

template <std::size_t N> bool nameIs(const std::array<char, N> &name, int length, const char *expected)
{
    return std::size_t(length) == std::strlen(expected) && std::memcmp(name.data(), expected, std::size_t(length)) == 0;
}

// The messages; `%1` is the limit.
constexpr const char *kBareLineFeed = "request head lines must end in CRLF, not a bare LF";
constexpr const char *kBareCarriageReturn = "a CR in the request head is not followed by LF";
constexpr const char *kBadRequestLine = "the request line is not METHOD SP TARGET SP HTTP-VERSION";

} // namespace

qsizetype RequestFraming::fail(int status, const char *code, const char *message, long long limit, qsizetype consumed)
{
    m_error = {status, code, message, limit};
    m_phase = Phase::Failed;
    m_bodyStartedMs = 0;
    m_continuePending = false;
    return consumed;
}

void RequestFraming::startRequest(long long nowMs)
{
    m_headStartedMs = std::max(nowMs, 1LL);
    m_lineBytes = 0;
    m_headBytes = 0;
    m_fields = 0;
    m_partBytes = 0;
    m_versionIndex = 0;
    m_http10 = false;
    m_sawLength = false;
    m_chunked = false;
    m_closeToken = false;
    m_keepAliveToken = false;
    m_expectContinue = false;
    m_upgrade = false;
    m_hostFields = 0;
    m_continuePending = false;
    m_contentLength = 0;
    m_phase = Phase::Method;
}

qsizetype RequestFraming::check(const char *data, qsizetype size, long long nowMs)
{
    m_fedAtMs = nowMs;
    const int maxFields = std::min(m_limits->maxHeaderFields, kQtMaxHeaderFields);
    qsizetype i = 0;
    while (i < size) {
        const auto c = static_cast<unsigned char>(data[i]);
        switch (m_phase) {
        case Phase::Idle:
            if (c == '\r') {
                m_phase = Phase::IdleLf;
                break;
            }
            if (m_headsAhead == kMaxHeadsAhead)
                return i; // the dispatcher is far behind: check on when it caught up
            startRequest(nowMs);
            m_requestStart = m_streamBytes + i;
            continue; // this byte starts the request line
        case Phase::IdleLf:
            if (c != '\n')
                return fail(400, "bad_line_end", kBareCarriageReturn, 0, i);
            if (++m_blankLines > kMaxBlankLines)
                return fail(400, "bad_request_line", "too many empty lines before the request line", 0, i);
            m_phase = Phase::Idle;
            break;

        case Phase::Method:
        case Phase::Target:
        case Phase::Version:
            // The line without its CR LF counts, as a header field's does (a CR elsewhere is refused
            // below).
            if (c != '\r' && ++m_lineBytes > m_limits->maxRequestLineBytes)
                return fail(414, "uri_too_long", "the request line is longer than %1 bytes",
                            m_limits->maxRequestLineBytes, i);
            if (m_phase == Phase::Method || m_phase == Phase::Target) {
                // Exactly one SP after a non-empty method and a non-empty target.
                if (c == ' ' && m_partBytes > 0) {
                    m_phase = m_phase == Phase::Method ? Phase::Target : Phase::Version;
                    m_partBytes = 0;
                } else if (m_phase == Phase::Method ? kChars.token[c] : kChars.target[c]) {
                    ++m_partBytes;
                } else {
                    return fail(400, c == '\n' ? "bad_line_end" : "bad_request_line",
                                c == '\n' ? kBareLineFeed : kBadRequestLine, 0, i);
                }
            } else {
                static constexpr char kPrefix[] = "HTTP/1.";
                if (m_versionIndex < 7) {
                    if (c != static_cast<unsigned char>(kPrefix[m_versionIndex]) && m_versionIndex < 5)
                        return fail(400, "bad_request_line", kBadRequestLine, 0, i);
                    if (c != static_cast<unsigned char>(kPrefix[m_versionIndex]))
                        return fail(400, "unsupported_version", "only HTTP/1.0 and HTTP/1.1 are served", 0, i);
                } else if (m_versionIndex == 7) {
                    if (c != '0' && c != '1')
                        return fail(400, "unsupported_version", "only HTTP/1.0 and HTTP/1.1 are served", 0, i);
                    m_http10 = c == '0';
                } else if (c == '\r') {
                    --m_lineBytes;
                    m_phase = Phase::RequestLineLf;
                } else {
                    return fail(400, c == '\n' ? "bad_line_end" : "bad_request_line",
                                c == '\n' ? kBareLineFeed : kBadRequestLine, 0, i);
                }
                ++m_versionIndex;
            }
            break;
        case Phase::RequestLineLf:
            if (c != '\n')
                return fail(400, "bad_line_end", kBareCarriageReturn, 0, i);
            m_headBytes = m_lineBytes + 2;
            if (m_headBytes > m_limits->maxHeaderBytes)
                return fail(431, "headers_too_large", "request headers exceed %1 bytes", m_limits->maxHeaderBytes, i);
            m_phase = Phase::FieldStart;
            break;

        case Phase::FieldStart:
            if (c == '\r') {
                m_phase = Phase::HeadEndLf;
                break;
            }
            if (isSpace(c))
                return fail(400, "obs_fold", "header lines may not be folded (obs-fold)", 0, i);
            if (!kChars.token[c])
                return fail(400, c == '\n' ? "bad_line_end" : "bad_field_name",
                            c == '\n' ? kBareLineFeed : "a header field name holds a character a name may not", 0, i);
            if (++m_fields > maxFields)
                return fail(431, "too_many_headers", "more than %1 header fields", maxFields, i);
            m_lineBytes = 0;
            m_nameLength = 0;
            m_phase = Phase::FieldName;
            continue; // this byte starts the name
        case Phase::FieldName:
            if (++m_lineBytes > kQtMaxFieldLineBytes)
                return fail(431, "header_field_too_large", "a header field is longer than %1 bytes",
                            kQtMaxFieldLineBytes, i);
            if (m_headBytes + m_lineBytes > m_limits->maxHeaderBytes)
                return fail(431, "headers_too_large", "request headers exceed %1 bytes", m_limits->maxHeaderBytes, i);
            if (kChars.token[c]) {
                if (m_nameLength < m_name.size())
                    m_name[m_nameLength] = lower(c);
                if (m_nameLength <= m_name.size())
                    ++m_nameLength; // one past the buffer: a name longer than any we read
            } else if (c == ':') {
                if (!finishFieldName())
                    return fail(400, "bad_transfer_encoding", "Transfer-Encoding must be exactly \"chunked\"", 0, i);
                m_phase = Phase::FieldValue;
            } else if (isSpace(c)) {
                return fail(400, "bad_field_name", "no whitespace is allowed between a field name and its colon", 0, i);
            } else {
                return fail(400, c == '\n' ? "bad_line_end" : "bad_field_name",
                            c == '\n' ? kBareLineFeed : "a header field name holds a character a name may not", 0, i);
            }
            break;
        case Phase::FieldValue: {
            // The common case in one tight loop: value bytes of a field whose value is not read, up
            // to the last byte both limits allow. The refusal then names the very byte that crosses
            // a limit, as in the other phases, so it does not depend on where the reads end.
            const qsizetype room = std::min<qsizetype>(kQtMaxFieldLineBytes - m_lineBytes,
                                                       m_limits->maxHeaderBytes - m_headBytes - m_lineBytes);
            const qsizetype scanEnd = std::min(size, i + std::max<qsizetype>(0, room));
            qsizetype end = i;
            while (end < scanEnd && kChars.fieldValue[static_cast<unsigned char>(data[end])]) {
                if (m_field != Field::Other && !valueByte(static_cast<unsigned char>(data[end])))
                    return fail(400, "bad_content_length", "Content-Length is not a number", 0, end);
                ++end;
            }
            m_lineBytes += int(end - i);
            i = end;
            if (i == size)
                return size;
            const auto d = static_cast<unsigned char>(data[i]);
            if (kChars.fieldValue[d]) { // one value byte more than the limits allow
                if (m_lineBytes + 1 > kQtMaxFieldLineBytes)
                    return fail(431, "header_field_too_large", "a header field is longer than %1 bytes",
                                kQtMaxFieldLineBytes, i);
                return fail(431, "headers_too_large", "request headers exceed %1 bytes", m_limits->maxHeaderBytes, i);
            }
            if (d == '\r') {
                m_phase = Phase::FieldLf;
                break;
            }
            return fail(400, d == '\n' ? "bad_line_end" : "bad_field_value",
                        d == '\n' ? kBareLineFeed : "header field values may not hold control bytes", 0, i);
        }
        case Phase::FieldLf:
            if (c != '\n')
                return fail(400, "bad_line_end", kBareCarriageReturn, 0, i);
            m_headBytes += m_lineBytes + 2;
            if (m_headBytes > m_limits->maxHeaderBytes)
                return fail(431, "headers_too_large", "request headers exceed %1 bytes", m_limits->maxHeaderBytes, i);
            if (!finishField())
                return i;
            m_phase = Phase::FieldStart;
            break;
        case Phase::HeadEndLf:
            if (c != '\n')
                return fail(400, "bad_line_end", kBareCarriageReturn, 0, i);
            m_headBytes += 2;
            if (!finishHead())
                return i;
            break;

        case Phase::FixedBody: {
            const qsizetype n = std::min<qsizetype>(qsizetype(m_remaining), size - i);
            i += n;
            m_remaining -= n;
            m_continuePending = false;
            if (m_remaining == 0)
                finishRequest();
            continue;
        }
        case Phase::ChunkData: {
            const qsizetype n = std::min<qsizetype>(qsizetype(m_remaining), size - i);
            i += n;
            m_remaining -= n;
            if (m_remaining == 0)
                m_phase = Phase::ChunkDataCr;
            continue;
        }
        case Phase::ChunkSizeStart:
        case Phase::ChunkSize:
        case Phase::ChunkSizeSpace:
        case Phase::ChunkExtension:
        case Phase::ChunkSizeLf:
        case Phase::ChunkDataCr:
        case Phase::ChunkDataLf:
        case Phase::LastChunkCr:
        case Phase::LastChunkLf:
            m_continuePending = false;
            // Tiny chunks are framing more than data: the framing counts against the body too.
            if (++m_framingBytes > kChunkFramingAllowance)
                return fail(413, "body_too_large", "request bodies are limited to %1 bytes", m_limits->maxBodyBytes, i);
            if (m_phase == Phase::ChunkSizeStart || m_phase == Phase::ChunkSize || m_phase == Phase::ChunkSizeSpace
                || m_phase == Phase::ChunkExtension) {
                if (++m_chunkLineBytes > kMaxChunkLineBytes)
                    return fail(400, "bad_chunk_size", "a chunk-size line is longer than %1 bytes", kMaxChunkLineBytes,
                                i);
            }
            switch (m_phase) {
            case Phase::ChunkSizeStart:
            case Phase::ChunkSize: {
                const int digit = hexValue(c);
                if (digit >= 0) {
                    if (m_remaining > (LLONG_MAX >> 4))
                        return fail(400, "bad_chunk_size", "a chunk size does not fit in 64 bits", 0, i);
                    m_remaining = m_remaining * 16 + digit;
                    m_phase = Phase::ChunkSize;
                } else if (m_phase == Phase::ChunkSizeStart) {
                    return fail(400, "bad_chunk_size", "a chunk size must be hexadecimal digits", 0, i);
                } else if (c == ';') {
                    m_phase = Phase::ChunkExtension;
                } else if (isSpace(c)) {
                    m_phase = Phase::ChunkSizeSpace;
                } else if (c == '\r') {
                    m_phase = Phase::ChunkSizeLf;
                } else {
                    return fail(400, "bad_chunk_size", "a chunk size must be hexadecimal digits", 0, i);
                }
                break;
            }
            case Phase::ChunkSizeSpace:
                if (c == ';')
                    m_phase = Phase::ChunkExtension;
                else if (!isSpace(c))
                    return fail(400, "bad_chunk_size", "a chunk size must be hexadecimal digits", 0, i);
                break;
            case Phase::ChunkExtension:
                if (c == '\r')
                    m_phase = Phase::ChunkSizeLf;
                else if (!kChars.fieldValue[c])
                    return fail(400, c == '\n' ? "bad_line_end" : "bad_chunk_extension",
                                c == '\n' ? "chunk-size lines must end in CRLF, not a bare LF"
                                          : "a chunk extension holds a control byte",
                                0, i);
                break;
            case Phase::ChunkSizeLf:
                if (c != '\n')
                    return fail(400, "bad_line_end", kBareCarriageReturn, 0, i);
                // The size alone decides: 413 before a byte of the chunk is read.
                if (m_remaining > m_limits->maxBodyBytes - m_bodyBytes)
                    return fail(413, "body_too_large", "request bodies are limited to %1 bytes", m_limits->maxBodyBytes,
                                i);
                m_bodyBytes += m_remaining;
                m_chunkLineBytes = 0;
                m_phase = m_remaining == 0 ? Phase::LastChunkCr : Phase::ChunkData;
                break;
            case Phase::ChunkDataCr:
                if (c != '\r')
                    return fail(400, "missing_chunk_crlf", "chunk data must be followed by CRLF", 0, i);
                m_phase = Phase::ChunkDataLf;
                break;
            case Phase::ChunkDataLf:
                if (c != '\n')
                    return fail(400, "missing_chunk_crlf", "chunk data must be followed by CRLF", 0, i);
                m_phase = Phase::ChunkSizeStart;
                break;
            case Phase::LastChunkCr:
                // Qt 6.4 reads no trailer section: a trailer field would be parsed as a request.
                if (c != '\r')
                    return fail(400, "trailers_refused", "trailer fields after a chunked body are not accepted", 0, i);
                m_phase = Phase::LastChunkLf;
                break;
            case Phase::LastChunkLf:
                if (c != '\n')
                    return fail(400, "bad_line_end", kBareCarriageReturn, 0, i);
                finishRequest();
                break;
            default:
                break;
            }
            break;

        case Phase::AwaitingUpgrade:
        case Phase::Failed:
            return i;
        }
        ++i;
    }
    return i;
}

bool RequestFraming::finishFieldName()
{
    m_field = Field::Other;
    m_valueStep = ValueStep::Leading;
    m_number = 0;
    m_matched = 0;
    if (nameIs(m_name, m_nameLength, "content-length"))
        m_field = Field::ContentLength;
    else if (nameIs(m_name, m_nameLength, "transfer-encoding"))
        m_field = Field::TransferEncoding;
    else if (nameIs(m_name, m_nameLength, "connection"))
        m_field = Field::Connection;
    else if (nameIs(m_name, m_nameLength, "expect"))
        m_field = Field::Expect;
    else if (nameIs(m_name, m_nameLength, "upgrade"))
        m_field = Field::Upgrade;
    else if (nameIs(m_name, m_nameLength, "host"))
        m_field = Field::Host;
    if (m_field == Field::Host)
        m_hostFields = std::uint8_t(std::min(m_hostFields + 1, 2));
    if (m_field == Field::Upgrade)
        m_upgrade = true;
    // A second Transfer-Encoding line lists a second coding (RFC 9110 §5.3).
    return !(m_field == Field::TransferEncoding && m_chunked);
}

// One byte of a value the check reads. False only for a Content-Length that is not a number
// (refused at once); the other values are judged when their line ends.
bool RequestFraming::valueByte(unsigned char c)
{
    switch (m_field) {
    case Field::ContentLength:
        if (c >= '0' && c <= '9' && m_valueStep != ValueStep::Trailing) {
            m_valueStep = ValueStep::Inside;
            m_number = std::min(m_number * 10 + (c - '0'), kLengthCeiling);
        } else if (isSpace(c) && m_valueStep != ValueStep::Inside) {
            // leading or trailing whitespace
        } else if (isSpace(c)) {
            m_valueStep = ValueStep::Trailing;
        } else {
            return false;
        }
        return true;
    case Field::TransferEncoding:
    case Field::Expect: {
        const char *expected = m_field == Field::Expect ? "100-continue" : "chunked";
        const int length = int(std::strlen(expected));
        if (m_valueStep == ValueStep::Bad)
            return true;
        if (isSpace(c)) {
            if (m_valueStep == ValueStep::Inside)
                m_valueStep = m_matched == length ? ValueStep::Trailing : ValueStep::Bad;
        } else if (m_valueStep != ValueStep::Trailing && m_matched < length && lower(c) == expected[m_matched]) {
            m_valueStep = ValueStep::Inside;
            ++m_matched;
        } else {
            m_valueStep = ValueStep::Bad;
        }
        return true;
    }
    case Field::Connection:
        if (c == ',') {
            connectionToken();
        } else if (!isSpace(c)) {
            if (m_matched < int(m_token.size()))
                m_token[std::size_t(m_matched)] = lower(c);
            m_matched = std::min(m_matched + 1, int(m_token.size()) + 1);
        }
        return true;
    case Field::Host:
        // uri-host [":" port] (RFC 3986 §3.2.2): a name's, an IPv4's or a bracketed IPv6's bytes;
        // surrounding whitespace only. Checked by byte (a name of bad shape still reaches no
        // handler that reads it: the routes ignore Host).
        if (m_valueStep == ValueStep::Bad)
            return true;
        if (isSpace(c)) {
            if (m_valueStep == ValueStep::Inside)
                m_valueStep = ValueStep::Trailing;
        } else if (m_valueStep != ValueStep::Trailing && isHostByte(c)) {
            m_valueStep = ValueStep::Inside;
        } else {
            m_valueStep = ValueStep::Bad;
        }
        return true;
    case Field::Upgrade:
    case Field::Other:
        return true;
    }
    return true;
}

void RequestFraming::connectionToken()
{
    if (nameIs(m_token, m_matched, "close"))
        m_closeToken = true;
    else if (nameIs(m_token, m_matched, "keep-alive"))
        m_keepAliveToken = true;
    m_matched = 0;
}

bool RequestFraming::finishField()
{
    switch (m_field) {
    case Field::ContentLength:
        if (m_valueStep == ValueStep::Leading) {
            fail(400, "bad_content_length", "Content-Length is not a number", 0, 0);
            return false;
        }
        // Two different lengths make the framing ambiguous (request smuggling): refuse.
        if (m_sawLength && m_number != m_contentLength) {
            fail(400, "conflicting_content_length", "the request has conflicting Content-Length headers", 0, 0);
            return false;
        }
        m_sawLength = true;
        m_contentLength = m_number;
        if (m_contentLength > m_limits->maxBodyBytes) {
            fail(413, "body_too_large", "request bodies are limited to %1 bytes", m_limits->maxBodyBytes, 0);
            return false;
        }
        return true;
    case Field::TransferEncoding:
        if (!(m_valueStep == ValueStep::Trailing || (m_valueStep == ValueStep::Inside && m_matched == 7))) {
            fail(400, "bad_transfer_encoding", "Transfer-Encoding must be exactly \"chunked\"", 0, 0);
            return false;
        }
        m_chunked = true;
        return true;
    case Field::Expect:
        if (m_valueStep == ValueStep::Trailing || (m_valueStep == ValueStep::Inside && m_matched == 12))
            m_expectContinue = true;
        return true;
    case Field::Connection:
        connectionToken();
        return true;
    case Field::Host:
        if (m_valueStep == ValueStep::Bad) {
            fail(400, "invalid_host", "the Host header field must be a host name or address, with an optional :port", 0,
                 0);
            return false;
        }
        return true;
    case Field::Upgrade:
    case Field::Other:
        return true;
    }
    return true;
}

bool RequestFraming::finishHead()
{
    // RFC 9112 §3.2: which host an HTTP/1.1 request is for must be said, and said once.
    if (m_hostFields == 0 && !m_http10) {
        fail(400, "missing_host", "an HTTP/1.1 request must carry a Host header field", 0, 0);
        return false;
    }
    if (m_hostFields > 1) {
        fail(400, "duplicate_host", "a request may carry only one Host header field", 0, 0);
        return false;
    }
    // RFC 9112 §6.1: Transfer-Encoding with Content-Length, or in HTTP/1.0, is faulty framing.
    if (m_chunked && m_sawLength) {
        fail(400, "length_with_chunked", "a request may not carry both Content-Length and Transfer-Encoding", 0, 0);
        return false;
    }
    if (m_chunked && m_http10) {
        fail(400, "bad_transfer_encoding", "HTTP/1.0 requests may not use Transfer-Encoding", 0, 0);
        return false;
    }
    const bool hasBody = m_chunked || m_contentLength > 0;
    // What follows an upgrade head belongs to the new protocol, unchecked: it must come alone.
    if (m_upgrade && hasBody) {
        fail(400, "upgrade_with_body", "a request asking for an upgrade may not carry a body", 0, 0);
        return false;
    }
    const auto slot = std::size_t((m_firstHead + m_headsAhead) % kMaxHeadsAhead);
    m_heads[slot] = RequestTraits{m_http10, m_closeToken || (m_http10 && !m_keepAliveToken)};
    m_headStarts[slot] = m_requestStart;
    ++m_headsAhead;
    m_headStartedMs = 0;
    m_inBody = hasBody;
    m_bodyStartedMs = hasBody ? std::max(m_fedAtMs, 1LL) : 0;
    m_continuePending = m_expectContinue && !m_http10 && hasBody;
    if (m_chunked) {
        m_remaining = 0;
        m_bodyBytes = 0;
        m_framingBytes = 0;
        m_chunkLineBytes = 0;
        m_phase = Phase::ChunkSizeStart;
    } else if (m_contentLength > 0) {
        m_remaining = m_contentLength;
        m_phase = Phase::FixedBody;
    } else {
        finishRequest();
    }
    return true;
}

void RequestFraming::finishRequest()
{
    m_inBody = false;
    m_bodyStartedMs = 0;
    m_blankLines = 0;
    m_phase = m_upgrade ? Phase::AwaitingUpgrade : Phase::Idle;
}

RequestTraits RequestFraming::takeHead()
{
    const RequestTraits traits = m_heads[std::size_t(m_firstHead)];
    m_firstHead = (m_firstHead + 1) % kMaxHeadsAhead;
    --m_headsAhead;
    // The upgrade request was served as plain HTTP: what follows it is HTTP again.
    if (m_headsAhead == 0 && m_phase == Phase::AwaitingUpgrade)
        m_phase = Phase::Idle;
    return traits;
}

bool RequestFraming::takeContinue()
{
    const bool wanted = m_continuePending;
    m_continuePending = false;
    return wanted;
}

} // namespace taxicore
