#pragma once

#include <QByteArray>
#include <QHostAddress>
#include <QList>
#include <QPair>
#include <QUrlQuery>

namespace taxicore {

enum class HttpMethod { Get, Head, Post, Put, Delete, Patch, Options, Other };

// What a handler needs from a request: a plain copy, so it can run on any thread.
struct ApiRequest {
    HttpMethod method = HttpMethod::Get;
    QByteArray path;
    QUrlQuery query;
    QByteArray body;
    QByteArray contentType;
    QByteArray acceptEncoding;
    QByteArray ifNoneMatch;
    QHostAddress remote;
    QList<QByteArray> params; // the {id} segments of the matched route, in order
};

using HeaderList = QList<QPair<QByteArray, QByteArray>>;

struct ApiResponse {
    int status = 200;
    QByteArray contentType = QByteArrayLiteral("application/json");
    QByteArray body;
    HeaderList headers;
};

} // namespace taxicore
