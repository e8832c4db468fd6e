#pragma once

#include "wire/HttpTypes.h"

#include <QByteArrayView>
#include <optional>

namespace taxicore {

// What a request asking for `Upgrade: websocket` must carry before the upgrade goes ahead or is
// refused as not found (RFC 6455 §4.1, §4.2.1, §4.4): Qt 6.4's WebSocket server closes the
// connection without a word on most of these, and upgrades a key of the wrong length.
struct WebSocketHandshake {
    bool isGet = false;
    bool isHttp10 = false;  // RFC 6455 §4.1 asks for HTTP/1.1
    QByteArrayView host;    // the Host field's value; null when absent
    QByteArrayView key;     // Sec-WebSocket-Key
    QByteArrayView version; // Sec-WebSocket-Version
};

// The one WebSocket protocol version served (RFC 6455 §4.4), named in a 426.
inline constexpr char kWebSocketVersion[] = "13";

// The answer to send instead of the upgrade, or nothing when the handshake is well formed:
// 400 `invalid_websocket_handshake` (not GET, HTTP/1.0, no Host), 400 `invalid_websocket_key` (missing, or
// not 16 bytes in base64), 426 `unsupported_websocket_version` with `Sec-WebSocket-Version: 13`
// (missing, or another version).
std::optional<ApiResponse> websocketHandshakeRefusal(const WebSocketHandshake &handshake);

} // namespace taxicore
