#pragma once

#include "http/ConnectionLimits.h"
#include "http/ConnectionState.h"

#include <QHash>
#include <QTcpServer>
#include <QTimer>
#include <atomic>

class QTcpSocket;

namespace taxicore {

class MetricsRecorder;

// A QTcpServer that stands in front of QHttpServer and fixes what Qt 6.4 does not do
// (docs/QT64.md §1, §4–§6, §8): it peeks each request head before QHttpServer parses it to
// learn the HTTP version, enforce size limits (413/414/431), answer `Expect: 100-continue`; it
// closes idle and slow connections, caps how many are open, and drains them on request.
class ConnectionGuard : public QTcpServer {
    Q_OBJECT
public:
    ConnectionGuard(ConnectionLimits limits, MetricsRecorder &metrics, QObject *parent = nullptr);

    // Takes over an accepted socket descriptor (from this listener, or passed in by another).
    void adoptSocket(qintptr descriptor);
    ConnectionState *state(QTcpSocket *socket);

    // Stop taking new requests: close idle connections now, busy ones after their response.
    void startDraining();
    // Serve keep-alive connections normally again (the in-process server after a switch back).
    void stopDraining() { m_draining = false; }
    bool isDraining() const { return m_draining.load(std::memory_order_relaxed); } // any thread
    int openConnections() const { return int(m_states.size()); }
    const ConnectionLimits &limits() const { return m_limits; }

    // A socket upgraded to WebSocket leaves the guard (no timeouts, no bookkeeping): Qt
    // disconnects every signal of it, so the guard would never hear of its end.
    void releaseUpgraded(QTcpSocket *socket);
    // Marks the end of the current request's head for the guard's own bookkeeping.
    void requestDispatched(QTcpSocket *socket);

Q_SIGNALS:
    void allConnectionsClosed();

protected:
    void incomingConnection(qintptr descriptor) override;

private:
    void inspect(QTcpSocket *socket);
    void reject(QTcpSocket *socket, ConnectionState &state, int status, const char *code, const QString &message);
    void sweep();
    void forget(QTcpSocket *socket);

    ConnectionLimits m_limits;
    MetricsRecorder &m_metrics;
    QHash<QTcpSocket *, ConnectionState> m_states;
    QTimer m_sweepTimer;
    std::atomic<bool> m_draining{false};
    long long m_drainStartedMs = 0;
};

} // namespace taxicore
