#include "http/RequestHeadCheck.h"

namespace taxicore {

namespace {

bool startsWithNoCase(const QByteArray &line, const char *prefix)
{
    return line.startsWith(prefix) || line.toLower().startsWith(prefix);
}

HeadVerdict refuse(int status, const char *code, const QString &message)
{
    return {status, code, message};
}

} // namespace

HeadVerdict inspectRequestHead(const QByteArray &bytes, const ConnectionLimits &limits, ConnectionState &state,
                               long long nowMs)
{
    qsizetype pos = 0;
    if (state.atRequestStart) {
        // Clients may send blank lines between requests (RFC 9112 2.2).
        while (bytes.size() >= pos + 2 && bytes[pos] == '\r' && bytes[pos + 1] == '\n')
            pos += 2;
        if (pos >= bytes.size())
            return {};
        // The header timeout runs from the request's first byte: a client trickling its request
        // line (slowloris) must not pass for an active keep-alive connection.
        if (state.headStartedMs == 0)
            state.headStartedMs = nowMs;
        const qsizetype lineEnd = bytes.indexOf("\r\n", pos);
        if (lineEnd < 0) {
            if (bytes.size() - pos > limits.maxRequestLineBytes)
                return refuse(414, "uri_too_long",
                              QStringLiteral("the request line is longer than %1 bytes").arg(limits.maxRequestLineBytes));
            return {}; // wait for the rest of the request line
        }
        if (lineEnd - pos > limits.maxRequestLineBytes)
            return refuse(414, "uri_too_long",
                          QStringLiteral("the request line is longer than %1 bytes").arg(limits.maxRequestLineBytes));
        const QByteArray line = bytes.mid(pos, lineEnd - pos);
        state.http10 = line.endsWith("HTTP/1.0");
        state.wantsClose = state.http10; // HTTP/1.0 closes unless it asks for keep-alive
        state.atRequestStart = false;
        state.headBytes = int(lineEnd + 2 - pos);
        state.headerFields = 0;
        state.contentLength = 0;
        state.sawContentLength = false;
        state.chunked = false;
        state.bodyBytes = 0;
        state.expectContinue = false;
        pos = lineEnd + 2;
    }
    while (!state.headComplete) {
        const qsizetype lineEnd = bytes.indexOf("\r\n", pos);
        if (lineEnd < 0) {
            if (state.headBytes + (bytes.size() - pos) > limits.maxHeaderBytes)
                return refuse(431, "headers_too_large",
                              QStringLiteral("request headers exceed %1 bytes").arg(limits.maxHeaderBytes));
            return {};
        }
        state.headBytes += int(lineEnd + 2 - pos);
        if (lineEnd == pos) {
            state.headComplete = true;
            break;
        }
        const QByteArray line = bytes.mid(pos, lineEnd - pos);
        pos = lineEnd + 2;
        if (++state.headerFields > limits.maxHeaderFields)
            return refuse(431, "too_many_headers", QStringLiteral("more than %1 header fields").arg(limits.maxHeaderFields));
        if (state.headBytes > limits.maxHeaderBytes)
            return refuse(431, "headers_too_large",
                          QStringLiteral("request headers exceed %1 bytes").arg(limits.maxHeaderBytes));
        if (startsWithNoCase(line, "content-length:")) {
            bool ok = false;
            const long long length = line.mid(15).trimmed().toLongLong(&ok);
            if (!ok || length < 0)
                return refuse(400, "bad_content_length", QStringLiteral("Content-Length is not a number"));
            // Two different lengths make the framing ambiguous (request smuggling): refuse.
            if (state.sawContentLength && length != state.contentLength)
                return refuse(400, "conflicting_content_length",
                              QStringLiteral("the request has conflicting Content-Length headers"));
            state.sawContentLength = true;
            state.contentLength = length;
            if (state.contentLength > limits.maxBodyBytes)
                return refuse(413, "body_too_large",
                              QStringLiteral("request bodies are limited to %1 bytes").arg(limits.maxBodyBytes));
        } else if (startsWithNoCase(line, "transfer-encoding:")) {
            state.chunked = line.toLower().contains("chunked");
        } else if (startsWithNoCase(line, "expect:")) {
            state.expectContinue = line.mid(7).trimmed().toLower() == "100-continue";
        } else if (startsWithNoCase(line, "connection:")) {
            const QByteArray value = line.mid(11).trimmed().toLower();
            if (value.contains("close"))
                state.wantsClose = true;
            else if (value.contains("keep-alive"))
                state.wantsClose = false;
        }
    }
    return {};
}

} // namespace taxicore
