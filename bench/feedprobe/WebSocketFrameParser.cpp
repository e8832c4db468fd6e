#include "WebSocketFrameParser.h"

#include <utility>

namespace taxicore::feedprobe {
namespace {

constexpr unsigned char kFin = 0x80;
constexpr unsigned char kReservedBits = 0x70;
constexpr unsigned char kOpcodeBits = 0x0f;
constexpr unsigned char kMaskBit = 0x80;
constexpr qsizetype kMaxControlPayload = 125;

enum Opcode : unsigned char { Continuation = 0, Text = 1, Binary = 2, Close = 8, Ping = 9, Pong = 10 };

unsigned char opcodeOf(WebSocketFrameParser::Kind kind)
{
    switch (kind) {
    case WebSocketFrameParser::Kind::Text:
        return Text;
    case WebSocketFrameParser::Kind::Binary:
        return Binary;
    case WebSocketFrameParser::Kind::Ping:
        return Ping;
    case WebSocketFrameParser::Kind::Pong:
        return Pong;
    case WebSocketFrameParser::Kind::Close:
        return Close;
    }
    return Text;
}

} // namespace

WebSocketFrameParser::WebSocketFrameParser(qsizetype maxMessageBytes)
    : m_maxMessageBytes(maxMessageBytes)
{
}

int WebSocketFrameParser::failed(const QString &why)
{
    m_error = why;
    m_buffer.clear();
    m_offset = 0;
    m_fragments.clear();
    return -1;
}

bool WebSocketFrameParser::feed(const char *data, qsizetype size, std::vector<Message> &out)
{
    if (!m_error.isEmpty())
        return false;
    m_buffer.append(data, size);
    int step;
    while ((step = takeFrame(out)) == 1) {
    }
    if (step < 0)
        return false;
    m_buffer.remove(0, m_offset); // once per read, not once per frame
    m_offset = 0;
    return true;
}

int WebSocketFrameParser::takeFrame(std::vector<Message> &out)
{
    const auto *bytes = reinterpret_cast<const unsigned char *>(m_buffer.constData() + m_offset);
    const qsizetype available = m_buffer.size() - m_offset;
    if (available < 2)
        return 0;
    const unsigned char opcode = bytes[0] & kOpcodeBits;
    const bool fin = bytes[0] & kFin;
    if (bytes[0] & kReservedBits)
        return failed(QStringLiteral("reserved bits set without an extension"));
    if (bytes[1] & kMaskBit)
        return failed(QStringLiteral("masked frame from the server"));
    qsizetype header = 2;
    std::uint64_t length = bytes[1] & 0x7f;
    if (length == 126) {
        header = 4;
        if (available < header)
            return 0;
        length = (std::uint64_t(bytes[2]) << 8) | bytes[3];
    } else if (length == 127) {
        header = 10;
        if (available < header)
            return 0;
        length = 0;
        for (int i = 2; i < 10; ++i)
            length = (length << 8) | bytes[i];
        if (length >> 63)
            return failed(QStringLiteral("64-bit length with its top bit set"));
    }
    const bool control = opcode >= Close;
    if (control) {
        if (opcode > Pong)
            return failed(QStringLiteral("unknown control opcode %1").arg(opcode));
        if (!fin)
            return failed(QStringLiteral("fragmented control frame"));
        if (length > std::uint64_t(kMaxControlPayload))
            return failed(QStringLiteral("control frame of %1 bytes (at most 125)").arg(length));
    } else if (opcode > Binary) {
        return failed(QStringLiteral("unknown data opcode %1").arg(opcode));
    } else if (opcode == Continuation && !m_inMessage) {
        return failed(QStringLiteral("continuation frame without a message"));
    } else if (opcode != Continuation && m_inMessage) {
        return failed(QStringLiteral("new data frame inside a fragmented message"));
    }
    if (!control && length + std::uint64_t(m_fragments.size()) > std::uint64_t(m_maxMessageBytes))
        return failed(QStringLiteral("message larger than %1 bytes").arg(m_maxMessageBytes));
    if (std::uint64_t(available - header) < length)
        return 0;

    const char *payload = m_buffer.constData() + m_offset + header;
    const qsizetype payloadSize = qsizetype(length);
    if (control) {
        const Kind kind = opcode == Close ? Kind::Close : opcode == Ping ? Kind::Ping : Kind::Pong;
        out.push_back({kind, QByteArray(payload, payloadSize)});
    } else {
        if (opcode != Continuation) {
            m_inMessage = true;
            m_messageKind = opcode == Text ? Kind::Text : Kind::Binary;
        }
        if (fin && m_fragments.isEmpty()) {
            out.push_back({m_messageKind, QByteArray(payload, payloadSize)}); // the common case: one frame
        } else {
            m_fragments.append(payload, payloadSize);
            if (fin)
                out.push_back({m_messageKind, std::exchange(m_fragments, QByteArray())});
        }
        if (fin)
            m_inMessage = false;
    }
    m_offset += header + payloadSize;
    return 1;
}

QByteArray encodeClientFrame(WebSocketFrameParser::Kind kind, const QByteArray &payload, std::uint32_t maskKey)
{
    QByteArray frame;
    const qsizetype size = payload.size();
    frame.reserve(size + 14);
    frame.append(char(kFin | opcodeOf(kind)));
    if (size < 126) {
        frame.append(char(kMaskBit | size));
    } else if (size <= 0xffff) {
        frame.append(char(kMaskBit | 126));
        frame.append(char(size >> 8));
        frame.append(char(size & 0xff));
    } else {
        frame.append(char(kMaskBit | 127));
        for (int shift = 56; shift >= 0; shift -= 8)
            frame.append(char((std::uint64_t(size) >> shift) & 0xff));
    }
    const char mask[4] = {char(maskKey >> 24), char(maskKey >> 16), char(maskKey >> 8), char(maskKey)};
    frame.append(mask, 4);
    for (qsizetype i = 0; i < size; ++i)
        frame.append(char(payload[i] ^ mask[i % 4]));
    return frame;
}

} // namespace taxicore::feedprobe
