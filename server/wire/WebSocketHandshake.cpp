#include "wire/WebSocketHandshake.h"

#include "wire/ApiError.h"
#include "wire/AsciiText.h"

namespace taxicore {

namespace {

// RFC 6455 §4.1: the key is a random 16-byte value in base64, so 24 characters with `==`.
constexpr qsizetype kKeyBytes = 16;
constexpr qsizetype kEncodedKeyBytes = 24;

bool isValidKey(QByteArrayView key)
{
    const QByteArrayView trimmed = trimmedOfOptionalWhitespace(key);
    if (trimmed.size() != kEncodedKeyBytes)
        return false;
    const auto decoded = QByteArray::fromBase64Encoding(trimmed.toByteArray(), QByteArray::AbortOnBase64DecodingErrors);
    return decoded && decoded.decoded.size() == kKeyBytes;
}

} // namespace

std::optional<ApiResponse> websocketHandshakeRefusal(const WebSocketHandshake &handshake)
{
    if (!handshake.isGet)
        return errorResponse(400, "invalid_websocket_handshake",
                             QStringLiteral("a WebSocket handshake is a GET request (RFC 6455 §4.1)"));
    if (handshake.isHttp10)
        return errorResponse(400, "invalid_websocket_handshake",
                             QStringLiteral("a WebSocket handshake is an HTTP/1.1 request (RFC 6455 §4.1)"));
    if (trimmedOfOptionalWhitespace(handshake.host).isEmpty())
        return errorResponse(400, "invalid_websocket_handshake",
                             QStringLiteral("a WebSocket handshake must name its host in Host (RFC 6455 §4.1)"));
    if (!isValidKey(handshake.key))
        return errorResponse(400, "invalid_websocket_key",
                             QStringLiteral("a WebSocket handshake needs a Sec-WebSocket-Key of 16 bytes in base64 "
                                            "(RFC 6455 §4.1)"));
    if (trimmedOfOptionalWhitespace(handshake.version) != QByteArrayView(kWebSocketVersion)) {
        ApiResponse refusal = errorResponse(
            426, "unsupported_websocket_version",
            QStringLiteral("only WebSocket version %1 is served: send Sec-WebSocket-Version: %1 (RFC 6455 §4.4)")
                .arg(QLatin1StringView(kWebSocketVersion)));
        refusal.headers.append({QByteArrayLiteral("Sec-WebSocket-Version"), QByteArray(kWebSocketVersion)});
        return refusal;
    }
    return std::nullopt;
}

} // namespace taxicore
