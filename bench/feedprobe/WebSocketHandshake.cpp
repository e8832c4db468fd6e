#include "WebSocketHandshake.h"

#include <QCryptographicHash>
#include <QList>

namespace taxicore::feedprobe {
namespace {

const QByteArray kAcceptGuid = QByteArrayLiteral("258EAFA5-E914-47DA-95CA-C5AB0DC85B11");

} // namespace

QByteArray handshakeRequest(const QByteArray &hostHeader, const QByteArray &path, const QByteArray &key)
{
    return "GET " + path + " HTTP/1.1\r\nHost: " + hostHeader
           + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + key
           + "\r\nSec-WebSocket-Version: 13\r\n\r\n";
}

HandshakeAnswer readHandshakeAnswer(const QByteArray &received, const QByteArray &key)
{
    HandshakeAnswer answer;
    const qsizetype end = received.indexOf("\r\n\r\n");
    if (end < 0) {
        if (received.size() > kMaxHandshakeAnswerBytes) {
            answer.state = HandshakeAnswer::Rejected;
            answer.reason = QStringLiteral("no end of the handshake answer in %1 bytes").arg(received.size());
        }
        return answer;
    }
    const QList<QByteArray> lines = received.left(end).split('\n');
    const QByteArray statusLine = lines.first().trimmed();
    answer.state = HandshakeAnswer::Rejected;
    if (!statusLine.startsWith("HTTP/1.1 101")) {
        answer.reason = QStringLiteral("not upgraded: %1").arg(QString::fromLatin1(statusLine));
        return answer;
    }
    const QByteArray expected = QCryptographicHash::hash(key + kAcceptGuid, QCryptographicHash::Sha1).toBase64();
    for (qsizetype i = 1; i < lines.size(); ++i) {
        const qsizetype colon = lines[i].indexOf(':');
        if (colon > 0 && lines[i].left(colon).trimmed().compare("Sec-WebSocket-Accept", Qt::CaseInsensitive) == 0
            && lines[i].mid(colon + 1).trimmed() == expected) {
            answer.state = HandshakeAnswer::Accepted;
            answer.headerBytes = end + 4;
            return answer;
        }
    }
    answer.reason = QStringLiteral("101 without the Sec-WebSocket-Accept the key asks for");
    return answer;
}

} // namespace taxicore::feedprobe
