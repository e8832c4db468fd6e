#pragma once

#include <QByteArray>
#include <QHostAddress>
#include <QList>
#include <QPair>
#include <QUrlQuery>
#include <functional>
#include <memory>

namespace taxicore {

enum class HttpMethod { Get, Head, Post, Put, Delete, Patch, Options, Other };

struct ApiResponse;
// Answers a request later, from any thread (see deferredResponse()).
using DeferredReply = std::function<void(const ApiResponse &)>;

// What a handler needs from a request: a plain copy, so it can run on any thread.
struct ApiRequest {
    HttpMethod method = HttpMethod::Get;
    QByteArray path;
    QUrlQuery query;
    QByteArray body;
    QByteArray contentType;
    QByteArray acceptEncoding;
    QByteArray ifNoneMatch;
    QByteArray authorization;  // the Authorization header (bearer tokens: http/OperatorAccess.h)
    QByteArray idempotencyKey; // the Idempotency-Key field; null when absent, "a, b" when sent twice
    QHostAddress remote;       // the client: the peer, or the one a trusted proxy names (http/ClientAddress.h)
    bool forwarded = false;    // `remote` came from a trusted proxy's X-Forwarded-For: never trusted loopback
    // Host names another machine, or Origin another site (http/OperatorAccess.h, isCrossSite): a
    // browser's request made by someone else's page, never trusted loopback.
    bool crossSite = false;
    QList<QByteArray> params; // the {id} segments of the matched route, in order
    // For a handler that answers only after something else finished (a ledger commit): keep a
    // copy, return deferredResponse(), and call it exactly once.
    std::shared_ptr<const DeferredReply> reply;
};

using HeaderList = QList<QPair<QByteArray, QByteArray>>;

struct ApiResponse {
    static constexpr int kDeferred = 0; // the handler will answer through ApiRequest::reply
    int status = 200;
    QByteArray contentType = QByteArrayLiteral("application/json");
    QByteArray body;
    HeaderList headers;
};

} // namespace taxicore
