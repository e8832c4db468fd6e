#include "wire/ResponseWriter.h"

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
    case 429:
        return QByteArrayLiteral("Too Many Requests");
    case 431:
        return QByteArrayLiteral("Request Header Fields Too Large");
    case 500:
        return QByteArrayLiteral("Internal Server Error");
    case 503:
        return QByteArrayLiteral("Service Unavailable");
    default:
        return QByteArrayLiteral("Status");
    }
}

QByteArray serializeResponse(const ApiResponse &response, bool http10, bool keepAlive, bool headOnly)
{
    QByteArray out;
    out.reserve(160 + (headOnly ? 0 : response.body.size()));
    out += http10 ? "HTTP/1.0 " : "HTTP/1.1 ";
    out += QByteArray::number(response.status);
    out += ' ';
    out += statusText(response.status);
    out += "\r\nContent-Type: ";
    out += response.contentType;
    out += "\r\nContent-Length: ";
    out += QByteArray::number(response.body.size());
    out += keepAlive ? "\r\nConnection: keep-alive" : "\r\nConnection: close";
    for (const auto &header : response.headers) {
        out += "\r\n";
        out += header.first;
        out += ": ";
        out += header.second;
    }
    out += "\r\n\r\n";
    if (!headOnly)
        out += response.body;
    return out;
}

} // namespace taxicore
