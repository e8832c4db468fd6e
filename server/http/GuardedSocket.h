#pragma once

#include <QTcpSocket>

namespace taxicore {

// A client connection whose buffered input the guard can hide from QHttpServer's parser. Qt 6.4
// asks bytesAvailable() before it reads a body and before it schedules the next pipelined
// request; while held, the answer is 0, so Qt waits (docs/QT64.md §10). The guard uses the true
// count, receivedBytes().
class GuardedSocket : public QTcpSocket {
public:
    using QTcpSocket::QTcpSocket;

    void setHeld(bool held) { m_held = held; }
    bool isHeld() const { return m_held; }
    qint64 receivedBytes() const { return QTcpSocket::bytesAvailable(); }
    qint64 bytesAvailable() const override { return m_held ? 0 : QTcpSocket::bytesAvailable(); }

private:
    bool m_held = false;
};

} // namespace taxicore
