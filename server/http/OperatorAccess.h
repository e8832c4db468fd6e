#pragma once

#include "wire/HttpTypes.h"

namespace taxicore {

// Who may use operator endpoints (/admin/...), the same in every process of a server: set once
// at start, before any request is served (the primary from its options, workers from the region).
struct OperatorAccessPolicy {
    QByteArray adminToken;     // empty: no token accepted (only trusted loopback clients)
    bool trustLoopback = true; // off when a reverse proxy on the same host makes everyone loopback
    QByteArray deviceToken;    // car devices (position reports); empty: only the admin token
};
void setOperatorAccessPolicy(OperatorAccessPolicy policy);
const OperatorAccessPolicy &operatorAccessPolicy();

// A direct loopback client while loopback is trusted (not one a trusted proxy forwarded, nor a
// cross-site request).
bool isTrustedLoopback(const ApiRequest &request);
// A request a browser on this machine made for someone else's page, which loopback trust would
// otherwise hand the operator endpoints: its Host names no name of this machine's loopback
// (localhost, 127.x.y.z, ::1, this host's name: a DNS-rebinding page uses its own name), or its
// Origin is not that very host and port (a cross-site form or fetch). Either header may be absent
// (non-browser clients send no Origin; HTTP/1.0 may send no Host). Views of the raw header values.
bool isCrossSite(QByteArrayView host, QByteArrayView origin);
// `token` is the admin token (never true while none is set).
bool isAdminToken(const QByteArray &token);
// The request carries `Authorization: Bearer <the admin token>`.
bool carriesAdminToken(const ApiRequest &request);

// Operator endpoints: answered to a request with the admin token, or without any token from a
// trusted loopback client. No token otherwise → 401; a wrong token → 401 even from loopback
// (both with `WWW-Authenticate: Bearer`).
void requireOperator(const ApiRequest &request);

// Car position reports (PUT /api/v1/cars/{id}/position): answered to a request with the device
// token or the admin token, or without any token from a trusted loopback client. No token
// otherwise → 401 device_token_required; any other token → 401 invalid_device_token.
void requireDevice(const ApiRequest &request);

// 401 with `WWW-Authenticate: Bearer` and {"error": code, "message": message}.
[[noreturn]] void throwUnauthorized(const char *code, const QString &message);

} // namespace taxicore
