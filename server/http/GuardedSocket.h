#pragma once

#include <QTcpSocket>

namespace taxicore {

// A client connection whose buffered input the guard can hide from QHttpServer's parser. Qt 6.4
// asks bytesAvailable() before it reads a body and before it schedules the next pipelined
// request; while held, the answer is 0, so Qt waits (docs/QT64.md §10). The guard uses the true
// count, receivedBytes().
//
// Holding does not stop Qt from reading a head: it reads heads with read(), a byte at a time.
// Parked input is hidden from every read: the bytes are read inside a transaction that
// unparkInput() rolls back, so Qt's parser finds nothing to read, head or body.
class GuardedSocket : public QTcpSocket {
public:
    using QTcpSocket::QTcpSocket;

    void setHeld(bool held) { m_held = held; }
    bool isHeld() const { return m_held; }
    qint64 receivedBytes() const { return QTcpSocket::bytesAvailable(); }
    qint64 bytesAvailable() const override { return m_held ? 0 : QTcpSocket::bytesAvailable(); }

    // Only while Qt's parser holds no part of the buffer (a transaction Qt left open has read
    // nothing, so reading on in it is the same as in one of our own). Bytes that arrive later are
    // not parked: the guard unparks on every readyRead, before Qt's parser runs.
    void parkInput()
    {
        if (m_parked)
            return;
        if (!isTransactionStarted())
            startTransaction();
        skip(QTcpSocket::bytesAvailable()); // in a transaction skip reads: the bytes stay buffered
        m_parked = true;
    }
    // The parked bytes are the front of the buffer again, for whoever reads next.
    void unparkInput()
    {
        if (!m_parked)
            return;
        m_parked = false;
        rollbackTransaction();
    }
    bool isParked() const { return m_parked; }

private:
    bool m_held = false;
    bool m_parked = false;
};

} // namespace taxicore
