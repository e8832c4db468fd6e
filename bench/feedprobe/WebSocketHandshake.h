#pragma once

#include <QByteArray>
#include <QString>

namespace taxicore::feedprobe {

// The client's opening handshake (RFC 6455 §4.1): the GET it sends and the check of the answer.
QByteArray handshakeRequest(const QByteArray &hostHeader, const QByteArray &path, const QByteArray &key);

struct HandshakeAnswer {
    enum State { Incomplete, Accepted, Rejected } state = Incomplete;
    qsizetype headerBytes = 0; // Accepted: where the frames begin in the bytes read
    QString reason;            // Rejected: why
};
// Answers larger than this without the blank line are rejected rather than buffered.
constexpr qsizetype kMaxHandshakeAnswerBytes = 16 * 1024;

// `received`: the bytes read so far. Accepted only for a 101 whose Sec-WebSocket-Accept fits `key`.
HandshakeAnswer readHandshakeAnswer(const QByteArray &received, const QByteArray &key);

} // namespace taxicore::feedprobe
