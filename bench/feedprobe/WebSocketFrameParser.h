#pragma once

#include <QByteArray>
#include <QString>

#include <cstdint>
#include <vector>

namespace taxicore::feedprobe {

// The server side of an RFC 6455 connection as the probe's follower reads it: unmasked frames,
// fragmented data messages reassembled, control frames (ping, pong, close) passed on as they
// come. Fed whatever a read returned; no extensions are negotiated, so RSV bits are an error.
// Text payloads are not UTF-8 checked: the probe only looks at a few ASCII fields.
class WebSocketFrameParser {
public:
    enum class Kind { Text, Binary, Ping, Pong, Close };
    struct Message {
        Kind kind;
        QByteArray payload;
    };
    // A message larger than this is a protocol error rather than memory without bound.
    static constexpr qsizetype kDefaultMaxMessageBytes = 16 * 1024 * 1024;

    explicit WebSocketFrameParser(qsizetype maxMessageBytes = kDefaultMaxMessageBytes);

    // Appends `size` bytes and moves every message they complete to `out`. False on a protocol
    // error (error() says which): the parser then stays failed and the connection must close.
    bool feed(const char *data, qsizetype size, std::vector<Message> &out);
    QString error() const { return m_error; }

private:
    int failed(const QString &why); // records why, returns -1 (takeFrame's error)
    // One frame from the front of m_buffer: 1 done, 0 need more bytes, -1 error.
    int takeFrame(std::vector<Message> &out);

    qsizetype m_maxMessageBytes;
    QByteArray m_buffer; // bytes read; those before m_offset are parsed
    qsizetype m_offset = 0;
    QByteArray m_fragments; // the data message being reassembled
    bool m_inMessage = false;
    Kind m_messageKind = Kind::Text;
    QString m_error;
};

// A client frame (always masked, RFC 6455 §5.3), FIN set: the subscribe, a pong, a close.
QByteArray encodeClientFrame(WebSocketFrameParser::Kind kind, const QByteArray &payload, std::uint32_t maskKey);

} // namespace taxicore::feedprobe
