#include "wire/ResponseWriter.h"

#include <charconv>
#include <cstring>

namespace taxicore {

QByteArray statusText(int status)
{
    switch (status) {
    case 100:
        return QByteArrayLiteral("Continue");
    case 200:
        return QByteArrayLiteral("OK");
    case 201:
        return QByteArrayLiteral("Created");
    case 202:
        return QByteArrayLiteral("Accepted");
    case 204:
        return QByteArrayLiteral("No Content");
    case 304:
        return QByteArrayLiteral("Not Modified");
    case 400:
        return QByteArrayLiteral("Bad Request");
    case 401:
        return QByteArrayLiteral("Unauthorized");
    case 403:
        return QByteArrayLiteral("Forbidden");
    case 404:
        return QByteArrayLiteral("Not Found");
    case 405:
        return QByteArrayLiteral("Method Not Allowed");
    case 408:
        return QByteArrayLiteral("Request Timeout");
    case 409:
        return QByteArrayLiteral("Conflict");
    case 413:
        return QByteArrayLiteral("Content Too Large");
    case 414:
        return QByteArrayLiteral("URI Too Long");
    case 426:
        return QByteArrayLiteral("Upgrade Required");
    case 429:
        return QByteArrayLiteral("Too Many Requests");
    case 431:
        return QByteArrayLiteral("Request Header Fields Too Large");
    case 500:
        return QByteArrayLiteral("Internal Server Error");
    case 501:
        return QByteArrayLiteral("Not Implemented");
    case 502:
        return QByteArrayLiteral("Bad Gateway");
    case 503:
        return QByteArrayLiteral("Service Unavailable");
    case 504:
        return QByteArrayLiteral("Gateway Timeout");
    case 507:
        return QByteArrayLiteral("Insufficient Storage");
    }
    // A status without a phrase of its own is named by its class (RFC 9110 §15).
    switch (status / 100) {
    case 1:
        return QByteArrayLiteral("Informational");
    case 2:
        return QByteArrayLiteral("Success");
    case 3:
        return QByteArrayLiteral("Redirection");
    case 4:
        return QByteArrayLiteral("Client Error");
    case 5:
        return QByteArrayLiteral("Server Error");
    default:
        return QByteArrayLiteral("Unknown");
    }
}

QByteArray serializeResponse(const ApiResponse &response, bool http10, bool keepAlive, bool headOnly)
{
    // One allocation of the exact size, no temporaries: this runs for every answer.
    char status[16];
    const auto statusEnd = std::to_chars(status, status + sizeof status, response.status).ptr;
    char length[24];
    const auto lengthEnd = std::to_chars(length, length + sizeof length, response.body.size()).ptr;
    const QByteArray reason = statusText(response.status); // a literal: no allocation
    const QByteArrayView connection = keepAlive ? "\r\nConnection: keep-alive" : "\r\nConnection: close";
    // A 304 has no content and its Content-Length would have to be the 200's (RFC 9110 §8.6): a
    // cache freshening its stored headers from it would take a 0 over. Likewise none for 1xx, 204.
    const bool lengthless = response.status == 304 || response.status == 204 || response.status < 200;
    qsizetype size = 9 + (statusEnd - status) + 1 + reason.size() + 16 + response.contentType.size()
                     + (lengthless ? 0 : 18 + (lengthEnd - length)) + connection.size() + 4
                     + (headOnly ? 0 : response.body.size());
    for (const auto &header : response.headers)
        size += 2 + header.first.size() + 2 + header.second.size();
    QByteArray out(size, Qt::Uninitialized);
    char *p = out.data();
    const auto put = [&p](QByteArrayView part) {
        if (!part.isEmpty())
            std::memcpy(p, part.data(), std::size_t(part.size()));
        p += part.size();
    };
    put(http10 ? "HTTP/1.0 " : "HTTP/1.1 ");
    put(QByteArrayView(status, statusEnd - status));
    put(" ");
    put(reason);
    put("\r\nContent-Type: ");
    put(response.contentType);
    if (!lengthless) {
        put("\r\nContent-Length: ");
        put(QByteArrayView(length, lengthEnd - length));
    }
    put(connection);
    for (const auto &header : response.headers) {
        put("\r\n");
        put(header.first);
        put(": ");
        put(header.second);
    }
    put("\r\n\r\n");
    if (!headOnly)
        put(response.body);
    Q_ASSERT(p == out.constData() + out.size());
    return out;
}

void markClosing(QByteArray &serialized)
{
    // serializeResponse writes the Connection field after Content-Type and Content-Length, before
    // any header of the response's own (no field value holds a CR LF): the first one is ours.
    static constexpr QByteArrayView keepAlive = "\r\nConnection: keep-alive";
    const qsizetype headEnd = serialized.indexOf("\r\n\r\n");
    const qsizetype at = QByteArrayView(serialized).first(headEnd < 0 ? serialized.size() : headEnd).indexOf(keepAlive);
    if (at >= 0)
        serialized.replace(at, keepAlive.size(), "\r\nConnection: close");
}

} // namespace taxicore
